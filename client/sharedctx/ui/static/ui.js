// sharedctx inspector: live rows from Watch, ticking times, copy buttons. No framework.
(() => {
  "use strict";

  function duration(seconds) {
    const s = Math.max(0, Math.floor(seconds));
    if (s < 60) return s + "s";
    if (s < 3600) return Math.floor(s / 60) + "m " + (s % 60) + "s";
    if (s < 86400) return Math.floor(s / 3600) + "h " + Math.floor((s % 3600) / 60) + "m";
    return Math.floor(s / 86400) + "d " + Math.floor((s % 86400) / 3600) + "h";
  }

  // Ages and TTLs count on in the page, so an entry's expiry can be watched coming.
  function tick() {
    const now = Date.now();
    for (const el of document.querySelectorAll("[data-expires]")) {
      const at = Number(el.dataset.expires);
      if (!at) continue;
      const left = (at - now) / 1000;
      el.textContent = left <= 0 ? "expired" : duration(left);
      el.classList.toggle("soon", left > 0 && left < 60);
      el.classList.toggle("expired", left <= 0);
    }
    for (const el of document.querySelectorAll("[data-time]")) {
      const at = Number(el.dataset.time);
      if (!at) continue;
      const ago = (now - at) / 1000;
      el.textContent = ago < 0 ? "in " + duration(-ago) : duration(ago) + " ago";
    }
  }

  function copy(text) {
    if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
    const area = document.createElement("textarea");
    area.value = text;
    document.body.append(area);
    area.select();
    document.execCommand("copy");
    area.remove();
    return Promise.resolve();
  }

  document.addEventListener("click", (event) => {
    const button = event.target.closest("[data-copy]");
    if (!button) return;
    const source = document.getElementById(button.dataset.copy);
    const text = "value" in source ? source.value : source.textContent;
    copy(text).then(() => {
      const label = button.textContent;
      button.textContent = "copied";
      setTimeout(() => { button.textContent = label; }, 1500);
    });
  });

  // A namespace page follows the server's Watch stream through /events (server-sent events).
  function follow(table) {
    const body = table.tBodies[0];
    const status = document.getElementById("live");
    let changes = 0;
    let queue = Promise.resolve();

    function show(state, text) {
      if (!status) return;
      status.dataset.state = state;
      status.textContent = text;
    }

    function rowOf(key) {
      for (const row of body.rows) if (row.dataset.key === key) return row;
      return null;
    }

    function label(row, cls, text) {
      row.classList.remove("is-new", "is-rewritten", "gone");
      row.classList.add(cls);
      const badge = row.querySelector(".change");
      if (badge) badge.textContent = text;
    }

    async function apply(change) {
      if (change.op === "embed") return;
      if (change.op === "clear") {
        for (const row of body.rows) if (row.dataset.key) label(row, "gone", "cleared");
      } else if (change.op === "put" || change.op === "touch") {
        const response = await fetch(table.dataset.row + "?key=" + encodeURIComponent(change.key),
          { credentials: "same-origin" });
        if (!response.ok) return; // gone again before we asked
        const template = document.createElement("template");
        template.innerHTML = (await response.text()).trim();
        const fresh = template.content.querySelector("tr");
        if (!fresh) return;
        const old = rowOf(change.key);
        if (change.op === "touch") label(fresh, "is-rewritten", "TTL restarted");
        else label(fresh, old ? "is-rewritten" : "is-new", old ? "rewritten v" + change.version : "new");
        if (old) old.replaceWith(fresh);
        else body.prepend(fresh);
        for (const row of [...body.rows]) if (row.classList.contains("empty")) row.remove();
      } else {
        const row = rowOf(change.key);
        const words = { delete: "deleted", expire: "expired", evict: "evicted" };
        if (row) label(row, "gone", words[change.op] || change.op);
      }
      changes += 1;
      show("live", "live · " + changes + " change" + (changes === 1 ? "" : "s"));
      tick();
    }

    const source = new EventSource(table.dataset.live);
    show("connecting", "connecting…");
    source.addEventListener("ready", () => {
      show("live", changes ? "live · " + changes + " changes" : "live");
    });
    source.addEventListener("change", (event) => {
      const change = JSON.parse(event.data);
      queue = queue.then(() => apply(change)).catch(() => {});
    });
    source.addEventListener("ended", (event) => {
      show("reconnecting", "reconnecting: " + JSON.parse(event.data).message);
    });
    source.addEventListener("reset", () => window.location.reload());
    source.onerror = () => {
      if (status && status.dataset.state !== "reconnecting") show("reconnecting", "reconnecting…");
    };
  }

  document.addEventListener("DOMContentLoaded", () => {
    tick();
    setInterval(tick, 1000);
    const table = document.querySelector("table[data-live]");
    if (table && window.EventSource) follow(table);
  });
})();
