// Staff's and technicians' blocks: the table session (开台), names, games; the table's log, followed live.
// Every sentence shown is the page's (#words, from the catalogue, in the page's language); the API's refusals come
// worded in it too.
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const W = JSON.parse((document.getElementById("words") || {}).textContent || "{}");
  const T = (key) => (W.text && W.text[key]) || key;
  const fmt = (template, params) => template.replace(/%\((\w+)\)s/g, (_, k) => (k in params ? String(params[k]) : ""));
  const say = (text) => { const el = $("staff-answer"); if (el) el.textContent = text; };
  async function post(path, body) {
    const r = await fetch(path, {method: "POST", headers: {"content-type": "application/json"},
                                 body: JSON.stringify(body), credentials: "same-origin"});
    const a = await r.json().catch(() => ({ok: false, error: T("no_answer")}));
    say(a.ok ? T("staff_done") : fmt(T("staff_refused"), {why: a.error}));
    showSession();
  }
  async function showSession() {
    const el = $("staff-session");
    if (!el) return;
    const r = await fetch("/api/staff/session", {credentials: "same-origin"});
    const a = await r.json().catch(() => null);
    if (!a || !a.ok) return;
    const s = a.session;
    const n = {hands: s.hands || 0, minutes: Math.round((s.seconds_left || 0) / 60)};
    if (!s.state) el.textContent = T("no_session");
    else if (s.state === "closed") el.textContent = fmt(T("session_over"), n);
    else el.textContent = fmt(T(s.state === "ending" ? "session_last" : "session_open"), n) +
      (s.warning ? " " + fmt(T("session_warning"), {minutes: s.warning}) : "");
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
