"""Programs the compression corpus runs to get real failures, logs and traces on this machine.

Each one is written to a temporary folder and run by a real tool (pytest, unittest, node,
cargo, gcc through make, java, python's logging); what they print is the sample.
"""

# The programs below are other languages' sources kept as written, long lines included.
# ruff: noqa: E501

from __future__ import annotations

FAILING_PYTEST = """
import json
import pytest


def parse_price(text):
    value = float(text.strip("$"))
    if value < 0:
        raise ValueError(f"negative price: {text}")
    return round(value, 2)


def load_order(raw):
    data = json.loads(raw)
    return {"id": data["id"], "total": sum(parse_price(p) for p in data["prices"])}


@pytest.mark.parametrize("n", range(40))
def test_prices_round_trip(n):
    assert parse_price(f"${n}.50") == n + 0.5


def test_total_of_order():
    assert load_order('{"id": 7, "prices": ["$1.25", "$2.50"]}')["total"] == 3.80


def test_negative_price_is_rejected_with_message():
    with pytest.raises(ValueError, match="below zero"):
        parse_price("$-3")


def test_order_without_id():
    assert load_order('{"prices": ["$1"]}')["id"] is None


def test_order_list_equality():
    assert [parse_price(p) for p in ["$1", "$2", "$3"]] == [1.0, 2.0, 4.0]


def test_bad_json_order():
    load_order("{'id': 1}")
"""

FAILING_UNITTEST = """
import unittest


def slug(title):
    return "-".join(title.lower().split())


class SlugTest(unittest.TestCase):
    def test_lowercases(self):
        self.assertEqual(slug("Hello World"), "hello-world")

    def test_strips_punctuation(self):
        self.assertEqual(slug("Hello, World!"), "hello-world")

    def test_empty(self):
        self.assertEqual(slug(""), "")


class ManyTest(unittest.TestCase):
    pass


for _n in range(60):
    setattr(ManyTest, f"test_word_{_n:02d}", lambda self, n=_n: self.assertEqual(slug(f"w{n}"), f"w{n}"))


class BrokenTest(unittest.TestCase):
    def test_unicode(self):
        self.assertEqual(slug("Ünïcode Títle"), "unicode-title")

    def test_none(self):
        slug(None)


if __name__ == "__main__":
    unittest.main(verbosity=2)
"""

FAILING_NODE_TEST = """
const test = require('node:test');
const assert = require('node:assert');

function median(xs) {
  const s = [...xs].sort();
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

for (let n = 1; n <= 40; n++) {
  test(`median of ${n} equal numbers`, () => {
    assert.strictEqual(median(Array(n).fill(7)), 7);
  });
}
test('median sorts numerically', () => {
  assert.strictEqual(median([10, 9, 1]), 9);
});
test('median of nothing', () => {
  assert.ok(Number.isNaN(median([])));
});
"""

CARGO_TOML = """
[package]
name = "ringbuf"
version = "0.1.0"
edition = "2021"
"""

CARGO_LIB = """
pub struct Ring { buf: Vec<i64>, head: usize, len: usize }

impl Ring {
    pub fn new(cap: usize) -> Self { Ring { buf: vec![0; cap], head: 0, len: 0 } }
    pub fn push(&mut self, x: i64) {
        let cap = self.buf.len();
        self.buf[(self.head + self.len) % cap] = x;
        if self.len < cap { self.len += 1 } else { self.head = (self.head + 1) % cap }
    }
    pub fn sum(&self) -> i64 { self.buf.iter().sum() }
    pub fn oldest(&self) -> i64 { self.buf[self.head + 1] }
}

#[cfg(test)]
mod tests {
    use super::*;
    macro_rules! fills { ($($name:ident: $n:expr,)*) => { $(
        #[test] fn $name() { let mut r = Ring::new(8); for i in 0..$n { r.push(i) }; assert!(r.len <= 8); }
    )* } }
    fills! { f01: 1, f02: 2, f03: 3, f04: 4, f05: 5, f06: 6, f07: 7, f08: 8, f09: 9, f10: 10,
             f11: 11, f12: 12, f13: 13, f14: 14, f15: 15, f16: 16, f17: 17, f18: 18, f19: 19, }
    #[test] fn sum_counts_only_live_items() { let mut r = Ring::new(2); r.push(1); assert_eq!(r.sum(), 1); r.push(2); r.push(3); assert_eq!(r.sum(), 5); }
    #[test] fn oldest_after_wrap() { let mut r = Ring::new(3); for i in 0..3 { r.push(i) }; assert_eq!(r.oldest(), 0); }
}
"""


def cargo_warnings_main(functions: int = 40) -> str:
    """A Rust program that builds with a warning or three per function (unused imports,
    variables and `mut`) and a type error in a few: what `cargo build` prints while a
    program is being written."""
    out = ["use std::collections::HashMap;", "use std::fs::File;", "use std::io::Read;", ""]
    for i in range(functions):
        out += [
            f"fn helper_{i}(input: i64, label_{i}: &str) -> i64 {{",
            f"    let mut total_{i} = input * {i};",
            f"    let scratch_{i} = {i};",
        ]
        if i % 9 == 3:
            out.append(f'    let wrong: i64 = "text {i}";')
        if i % 11 == 5:
            out.append("    let v: Vec<i64> = vec![1, 2]; let s: String = v;")
        out += [f"    input + {i}", "}", ""]
    out += ["fn main() {", '    println!("{}", helper_1(2, "x"));', "}", ""]
    return "\n".join(out)


C_SOURCES = {
    "util.c": """
#include <stdio.h>
#include <string.h>
int count_words(const char *s) { int n = 0, in = 0; for (; *s; s++) { if (*s == ' ') in = 0; else if (!in) { in = 1; n++; } } return n; }
char *copy_name(char *dst, const char *src) { strcpy(dst, src); return dst; }
int unused_helper(int x) { int y; return x; }
""",
    "parse.c": """
#include <stdlib.h>
#include <stdio.h>
long parse_size(const char *s) { char *end; long v = strtol(s, &end, 10); if (*end == 'K') v *= 1024; return v; }
int compare(const void *a, const void *b) { return *(int *)a - *(int *)b; }
void report(long n) { printf("%d\\n", n); }
""",
    "main.c": """
#include <stdio.h>
int count_words(const char *s);
long parse_size(const char *s);
int main(int argc, char **argv) {
    int total = 0;
    for (int i = 1; i < argc; i++) total += count_words(argv[i]);
    printf("%d words, %ld bytes\\n", total, parse_size("12K"));
    return missing_function(total);
}
""",
}
for _i in range(24):
    C_SOURCES[f"gen_{_i:02d}.c"] = (
        f"int gen_{_i:02d}(int a, int b) {{ int unused = a; return a * {_i} + b; }}\n"
    )

MAKEFILE = """
SOURCES := $(sort $(wildcard *.c))
OBJECTS := $(SOURCES:.c=.o)
CFLAGS := -Wall -Wextra -O1
app: $(OBJECTS)
\t$(CC) -o $@ $(OBJECTS)
%.o: %.c
\t$(CC) $(CFLAGS) -c $< -o $@
"""

SERVICE_LOG = """
import logging
import random
import sys

logging.basicConfig(
    stream=sys.stdout,
    level=logging.DEBUG,
    format="%(asctime)s %(levelname)-7s %(name)s: %(message)s",
)
rng = random.Random(4)
log = logging.getLogger("ingest.worker")
http = logging.getLogger("ingest.http")
db = logging.getLogger("ingest.db")
log.info("worker starting: queue=orders batch_size=50 concurrency=4")
for batch in range(1, int(sys.argv[1]) + 1):
    db.debug("connection pool: in_use=%d idle=%d", rng.randint(1, 4), rng.randint(0, 6))
    for item in range(25):
        order = batch * 1000 + item
        http.debug("GET /api/orders/%d -> 200 in %dms", order, rng.randint(3, 90))
        log.info("processed order %d (%d lines, %.2f EUR)", order, rng.randint(1, 9),
                 rng.uniform(5, 500))
    if batch % 10 == 0:
        log.warning("queue lag is %d messages (threshold 500)", 480 + batch * 3)
    if batch == 23:
        http.error("GET /api/orders/23017 -> 503 Service Unavailable after 3 retries")
        try:
            {"id": 23017}["customer"]
        except KeyError:
            log.exception("failed to enrich order 23017, skipping")
    if batch == 31:
        db.error("deadlock detected while committing batch 31; rolled back")
    log.info("batch %d committed (%d orders)", batch, 25)
log.critical("worker stopping: 2 errors, 1 order skipped")
"""

# A training script as people write them: tqdm bars on stderr, a log line per epoch, one
# epoch that fails. Read without newline translation, its bars keep their carriage returns.
TRAIN_LOOP = """
import logging
import math
import sys

from tqdm import tqdm

logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")
log = logging.getLogger("train")
steps = int(sys.argv[1])
for epoch in range(1, 6):
    loss = 0.0
    for step in tqdm(range(steps), desc=f"epoch {epoch}", mininterval=0, miniters=5):
        loss = 2.0 / (epoch + step / steps) + (math.nan if epoch == 4 and step > steps // 2 else 0)
    if math.isnan(loss):
        log.error("epoch %d diverged: loss is nan; restoring the last checkpoint", epoch)
        continue
    log.info("epoch %d done: loss=%.4f, checkpoint saved to ckpt/epoch-%d.pt", epoch, loss, epoch)
"""


def chain_script(depth: int) -> str:
    """A script that fails at the bottom of `depth` distinct nested calls, with a cause."""
    names = [f"stage_{i:02d}" for i in range(depth)]
    parts = [
        f"def {a}(x):\n    y = x + 1\n    return {b}(y)\n"
        for a, b in zip(names, names[1:], strict=False)
    ]
    parts.append(
        f"def {names[-1]}(x):\n    settings = {{}}\n    try:\n"
        "        return settings['timeout'] * x\n"
        "    except KeyError as exc:\n"
        "        raise RuntimeError(f'stage {x}: settings lack a timeout') from exc\n"
    )
    parts.append(f"{names[0]}(0)\n")
    return "\n".join(parts)


NODE_TRACE = """
function parseRecord(depth, line) {
  if (depth === 0) { return JSON.parse(line).user.name; }
  return parseRecord(depth - 1, line);
}
function handle(line) { return parseRecord(30, line); }
handle('{"id": 1}');
"""

JAVA_TRACE = """
public class Deep {
    static int level(int n, String raw) {
        if (n == 0) {
            try {
                return Integer.parseInt(raw);
            } catch (NumberFormatException e) {
                throw new IllegalStateException("could not parse retry count", e);
            }
        }
        return level(n - 1, raw) + 1;
    }
    public static void main(String[] args) { level(30, "x1"); }
}
"""
