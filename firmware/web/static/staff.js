// Staff's and technicians' blocks: the table session (开台), names, games; the table's log, followed live.
// Every string shown is plain English, for the catalogue.
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const say = (text) => { const el = $("staff-answer"); if (el) el.textContent = text; };
  async function post(path, body) {
    const r = await fetch(path, {method: "POST", headers: {"content-type": "application/json"},
                                 body: JSON.stringify(body), credentials: "same-origin"});
    const a = await r.json().catch(() => ({ok: false, error: "no answer"}));
    say(a.ok ? "Done." : "Refused: " + a.error);
    showSession();
  }
  async function showSession() {
    const el = $("staff-session");
    if (!el) return;
    const r = await fetch("/api/staff/session", {credentials: "same-origin"});
    const a = await r.json().catch(() => null);
    if (!a || !a.ok) return;
    const s = a.session;
    if (!s.state) el.textContent = "No session open: the table plays freely.";
    else if (s.state === "closed") el.textContent = "The session is over: the table is closed (" + s.hands + " hands).";
    else el.textContent = "Open: " + Math.round(s.seconds_left / 60) + " minutes left, " + s.hands + " hands" +
      (s.state === "ending" ? ", last hand." : ".") + (s.warning ? " Warning: " + s.warning + " minutes left!" : "");
  }
  const actions = {
    open: () => post("/api/staff/session", {action: "open", minutes: parseInt($("staff-minutes").value, 10)}),
    close: () => post("/api/staff/session", {action: "close"}),
    players: () => post("/api/staff/players", {players: Object.fromEntries(
      ["E", "S", "W", "N"].map((s) => [s, $("staff-seat-" + s).value.trim()]))}),
    "clear-players": () => post("/api/staff/players", {players: null}),
    start: () => { const b = {action: "start"}; const r = $("staff-rules").value.trim();
      const c = parseInt($("staff-chips").value, 10); if (r) b.rules = r; if (c) b.chips = c;
      return post("/api/staff/game", b); },
    end: () => post("/api/staff/game", {action: "end"}),
  };
  document.addEventListener("click", (e) => {
    const name = e.target && e.target.dataset ? e.target.dataset.staff : null;
    if (name && actions[name]) actions[name]();
  });
  if ($("staff-session")) { showSession(); setInterval(showSession, 15000); }
  // the technician's log: the recent lines, then followed (the server answers when new lines come)
  let after = 0, asking = false;
  async function log(reset) {
    const pre = $("log-lines");
    if (!pre || asking) return;
    if (reset) { after = 0; pre.textContent = ""; }
    asking = true;
    try {
      const q = new URLSearchParams({level: $("log-level").value, text: $("log-text").value, after: String(after),
                                     follow: after && $("log-follow").checked ? "1" : "0"});
      const r = await fetch("/api/tech/log?" + q, {credentials: "same-origin"});
      const a = await r.json();
      if (a.ok) {
        pre.textContent += a.lines.map((l) => l.level + " " + l.logger + ": " + l.message + "\n").join("");
        const extra = pre.textContent.length - 200000;
        if (extra > 0) pre.textContent = pre.textContent.slice(extra);
        after = a.last;
      }
    } finally { asking = false; }
    if ($("log-follow").checked) setTimeout(() => log(false), 500);
  }
  if ($("log-lines")) {
    log(true);
    ["log-level", "log-text"].forEach((id) => $(id).addEventListener("change", () => log(true)));
    $("log-follow").addEventListener("change", () => log(false));
  }
})();
