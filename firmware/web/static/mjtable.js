// mjtable web page: the one script. Keeps the page live from the table's event stream (a snapshot, then
// patches of the changed fields, heartbeats), reloads the history fragments and the warnings (shuffle bias,
// wear) when they change, and runs the hold-to-run buttons of the service page (a keep-alive while held; let go, and the table stops the motor).
// The player's view (no login) polls its live fragment instead. Every word shown is the page's language: the
// server puts them in the page (#words, from the catalogue), so no identifier of a status is ever shown as text.
"use strict";
(function () {
  const page = document.body.dataset.page;
  const W = JSON.parse((document.getElementById("words") || {}).textContent || "{}");
  const T = (key) => (W.text && W.text[key]) || key;
  function fmt(template, params) {
    return template.replace(/%\((\w+)\)[sd]/g, (_, name) => (params[name] === undefined ? "" : String(params[name])));
  }
  const position = (side) => (W.positions ? W.positions[Number(side) % 4] : "");
  const windOf = (side, dealer) => (W.winds ? W.winds[(Number(side) - Number(dealer) + 4) % 4] : "");
  const mechanism = (name) => (W.mechanisms && W.mechanisms[name]) || name.replace(/_/g, " ");
  function sensorName(name) {
    if (W.sensors && W.sensors[name]) return W.sensors[name];
    const m = /^(.*?)(\d+)$/.exec(name);
    if (m && W.sensor_series && W.sensor_series[m[1]]) return fmt(W.sensor_series[m[1]], { n: Number(m[2]) + 1 });
    return name.replace(/_/g, " ");
  }
  function lampWords(pattern) {
    const lit = (part) => (part.trim() === "none" ? T("none") : part.split("+").map((d) => position(d)).join("+"));
    const [first, second] = String(pattern).split(" then ");
    return fmt(T("then"), { first: lit(first || "none"), second: lit(second || "none") });
  }
  const faultWords = (code, field, fallback) => (W.faults && W.faults[code] && W.faults[code][field]) || fallback || "";
  const technician = document.body.dataset.role === "technician";
  let status = null;
  let source = null;
  let lastEventMs = 0;

  // -- the event stream --------------------------------------------------------------------------------
  function connect() {
    if (source) source.close();
    source = new EventSource("/events");
    source.addEventListener("snapshot", (e) => {
      status = JSON.parse(e.data); seen(); render(null);
      if (page === "faults") reload("/faults/warnings", "warning-list");     // (they may have changed meanwhile)
    });
    source.addEventListener("patch", (e) => {
      const patch = JSON.parse(e.data);
      if (!status) return;
      merge(patch); seen(); render(patch);
    });
    source.addEventListener("heartbeat", (e) => {
      const beat = JSON.parse(e.data);
      seen();
      if (status && beat.link) { status.link = beat.link; showLink(); }
    });
    source.addEventListener("logged_out", () => {
      location.href = "/login?next=" + encodeURIComponent(location.pathname);
    });
    source.onerror = () => { linkBanner(T("lost")); };
  }
  function seen() { lastEventMs = Date.now(); }
  function merge(patch) {
    for (const [name, fields] of Object.entries(patch)) {
      if (fields && typeof fields === "object" && !Array.isArray(fields) && status[name]
          && typeof status[name] === "object") Object.assign(status[name], fields);
      else status[name] = fields;
    }
  }
  // a phone that wakes (or a tab shown again) after a while: a fresh snapshot
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible" && Date.now() - lastEventMs > 5000) connect();
  });

  // -- drawing ---------------------------------------------------------------------------------------
  function get(path) { return path.split(".").reduce((o, k) => (o == null ? undefined : o[k]), status); }
  function text(value, format) {
    if (value === null || value === undefined) return format === "none" || format === "fault" ? T("none") : format === "dash" ? "–" : "";
    if (format === "state") return (W.states && W.states[value]) || "–";
    if (format === "position") return position(value);
    if (format === "round") return W.rounds ? W.rounds["ESWN".indexOf(value)] || "–" : value;
    if (format === "fault") return faultWords(value, "text", value);
    if (format === "mechanisms") return value.map(mechanism).join(", ");
    if (Array.isArray(value)) return value.join(format === "list" && value.length && typeof value[0] === "string" ? ", " : " ");
    return String(value);
  }
  function el(tag, attrs, children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
    for (const child of children || []) node.append(child);
    return node;
  }
  function linkBanner(message) {
    const banner = document.getElementById("link");
    if (!banner) return;
    banner.hidden = !message;
    banner.textContent = message || "";
  }
  function showLink() {
    const link = status && status.link;
    if (!link || link.up) { linkBanner(""); return; }
    // (why is worded in the page's language, the seconds or the other side's own words in it; else the English)
    const why = link.why && W.text && W.text["link_" + link.why];
    const reason = why ? fmt(why, { detail: link.detail === null || link.detail === undefined ? "?" : link.detail })
      : link.reason || "?";
    linkBanner(fmt(T("not_answering"), { reason }));
  }
  function render(patch) {
    if (!status) return;
    showLink();
    document.querySelectorAll("[data-field]").forEach((node) => {
      node.textContent = text(get(node.dataset.field), node.dataset.format);
    });
    drawLiveWords();
    if (status.stacking) drawStacking();
    if (status.chips) drawChips();
    drawDeal(); drawReader(); drawFaults(); drawSensors(); drawDiagram(); drawService();
    if (patch) refreshFragments(patch);
  }
  function drawStacking() {
    const s = status.stacking;
    document.querySelectorAll("#stacking .bar").forEach((bar) => {
      const side = Number(bar.dataset.side);
      const counted = s.counted ? s.counted[side] : 0;
      bar.querySelector(".fill").style.width = (s.target ? Math.min(100, 100 * counted / s.target) : 0) + "%";
      bar.querySelector(".count").textContent = s.counted ? counted + (s.target ? " / " + s.target : "") : "";
    });
  }
  // the live line in words: state, hand, dealer, stacking, chips (as mjtable sim --speed says it, in this language)
  function drawLiveWords() {
    const box = document.getElementById("live-words");
    if (!box || !status.table || !status.book) return;
    const b = status.book, parts = [text(status.table.state, "state")];
    if (b.hand) parts.push(fmt(T("hand_n"), { n: b.hand }), fmt(T("dealer_is"), { who: position(b.dealer) }));
    const s = status.stacking;
    if (s && s.active && s.counted) parts.push(fmt(T("stacking_n"), { n: s.counted.reduce((a, x) => a + x, 0) }));
    if (status.chips) parts.push(fmt(T("chips_are"), { chips: status.chips.chips.join(" ") }));
    box.textContent = parts.join(" · ");
  }
  function drawChips() {
    document.querySelectorAll("#chips tr[data-side]").forEach((row) => {
      row.querySelector(".amount").textContent = status.chips.chips[Number(row.dataset.side)];
    });
  }
  // a hand in the usual order: characters, dots, bamboo, winds, dragons, flowers (as firmware/web/scoreboard.py)
  const ORDER = "ESWNCFP";
  function rank(c) {
    if (c === "?") return 99;
    const i = ORDER.indexOf(c);
    if (i >= 0) return 27 + i;
    return { m: 0, p: 9, s: 18, f: 34 }[c[1]] + Number(c[0]) - 1;
  }
  function tiles(codes) {
    return el("span", { class: "tiles" }, [...codes].sort((a, b) => rank(a) - rank(b)).map((c) => el("img", {
      src: "/static/tiles/" + (c === "?" ? "back" : c) + ".svg", alt: c, width: "30", height: "40" })));
  }
  function drawDeal() {
    const box = document.getElementById("deal-hands");
    if (!box || !status.deal) return;
    const deal = status.deal;
    const key = JSON.stringify([deal.hand, deal.hands]);
    if (box.dataset.key === key) return;
    box.dataset.key = key;
    box.replaceChildren();
    if (!deal.hands) {
      box.append(el("p", { class: "quiet" }, [deal.hand ? fmt(T("not_read"), { hand: deal.hand }) : T("no_deal")]));
      return;
    }
    box.append(el("p", { class: "small" }, [fmt(T("deal_line"), { hand: deal.hand, dealer: position(deal.dealer), dice: (deal.dice || []).join(" ") })]));
    for (const [side, codes] of Object.entries(deal.hands)) {
      box.append(el("div", { class: "hand-row" }, [el("span", { class: "who" }, [fmt(T("seat"), { who: position(side), wind: windOf(side, deal.dealer) })]), tiles(codes)]));
    }
  }
  function drawReader() {
    const box = document.getElementById("reader");
    if (!box || !status.reader) return;
    box.replaceChildren(...Object.entries(status.reader).flatMap(([k, v]) => [el("dt", {}, [(W.reader && W.reader[k]) || k.replace(/_/g, " ")]), el("dd", {}, [String(v)])]));
  }
  function drawFaults() {
    const box = document.getElementById("active-faults");
    if (!box || !status.faults) return;
    const active = status.faults.active || [];
    box.replaceChildren(...(active.length ? active.map((f) => el("div", { class: "fault tier-" + f.tier }, [
      el("span", { class: "code" }, [f.code]), " " + ((W.tiers && W.tiers[f.tier]) || "") + " · ", el("b", {}, [faultWords(f.code, "text", f.text)]),
      el("span", { class: "lamps" }, [" · " + fmt(T("lamps"), { lamps: lampWords(f.lamps) })]), el("br"), faultWords(f.code, "hint", f.hint)])) : [el("p", { class: "quiet" }, [T("none")])]));
    const ack = document.getElementById("ack");
    if (ack) ack.disabled = !(status.table && status.table.state === "latched");
  }
  function drawSensors() {
    const box = document.getElementById("sensors");
    if (!box || !status.sensors) return;
    box.replaceChildren(...Object.entries(status.sensors).map(([name, on]) =>
      el("span", { class: on ? "on" : "", "data-sensor": name }, [sensorName(name) + " · " + (on ? T("on") : T("off"))])));
  }
  function drawDiagram() {
    const box = document.getElementById("diagram");
    if (!box || !status.table) return;
    box.querySelectorAll(".state.current").forEach((n) => n.classList.remove("current"));
    const node = document.getElementById("state-" + status.table.state);
    if (node) node.classList.add("current");
  }
  function drawService() {
    const note = document.getElementById("service-note");
    if (!note || !status.table) return;
    const t = status.table;
    const lid = status.sensors && status.sensors.lid;
    let why = "";
    if (!t.service_mode) why = fmt(T("needs_service"), { state: text(t.state, "state") });
    else if (lid) why = T("lid_open");
    else if (t.interlocks && t.interlocks.length) why = fmt(T("refused_while"), { what: t.interlocks.map((i) => {
      const code = (/\((E\d+)\)$/.exec(i) || [])[1];
      return code ? faultWords(code, "text", i) : i;
    }).join(", ") });
    note.textContent = why || T("service_ready");
    document.querySelectorAll("button.hold").forEach((b) => { if (!b.classList.contains("held")) b.disabled = Boolean(why); });
  }

  // -- history fragments that change with the table ------------------------------------------------------
  const fetching = {};
  function reload(url, id) {
    if (fetching[id]) return;
    fetching[id] = true;
    fetch(url, { credentials: "same-origin" }).then((r) => r.text()).then((html) => {
      const body = document.getElementById(id);
      if (body) body.innerHTML = html;
    }).finally(() => { fetching[id] = false; });
  }
  function refreshFragments(patch) {
    if (page === "scoreboard" && (patch.chips || (patch.book && ("hand_open" in patch.book || "last_winner" in patch.book))))
      reload("/scoreboard/rows", "hand-rows");
    if (page === "faults" && (patch.faults || (patch.table && "fault" in patch.table))) reload("/faults/history", "fault-history");
    if (page === "faults" && patch.warnings) reload("/faults/warnings", "warning-list");
  }

  // -- actions --------------------------------------------------------------------------------------------
  async function post(url, body) {
    try {
      const r = await fetch(url, { method: "POST", credentials: "same-origin", keepalive: true,
        headers: { "content-type": "application/json" }, body: JSON.stringify(body || {}) });
      return await r.json();
    } catch (err) { return { ok: false, error: T("no_answer") + " (" + err.message + ")", lost: true }; }
  }
  function describe(answer) {
    if (!answer) return "";
    if (answer.error) return answer.error;
    const moves = answer.moves || (answer.mechanism ? [answer] : []);
    if (!moves.length) return answer.ok ? T("done") : T("failed");
    return moves.map((m) => mechanism(m.mechanism) + " " + (m.ok ? T("ok") : T("fail")) + (m.elapsed_s != null ? " " + m.elapsed_s.toFixed(2) + " s" : "")
      + (m.ran_s != null ? " " + fmt(T("ran"), { s: m.ran_s, revolutions: m.revolutions }) : "")
      + (m.fault ? " " + m.fault + ": " + faultWords(m.fault, "hint", m.hint || "") : "")).join("\n");
  }
  function holdButton(button) {
    const out = document.getElementById("hold-answer");
    let hold = null, timer = null, pressed = false;
    const say = (message) => { if (out) out.textContent = message; };
    function finish(answer) {
      clearInterval(timer); timer = null; hold = null;
      button.classList.remove("held");
      if (answer) say(button.textContent + ": " + describe(answer));
      drawService();
    }
    async function alive() {
      if (!hold) return;
      const answer = await post("/api/hold/" + hold + "/alive");
      if (answer.lost) return;                      // (no answer: the table's dead-man stops it)
      if (!answer.ok || !answer.running) finish(answer.answer || answer);
    }
    async function start(event) {
      if (event) event.preventDefault();
      if (pressed || button.disabled) return;
      pressed = true;
      button.classList.add("held");
      say(button.textContent + ": " + T("running"));
      const answer = await post("/api/hold", { kind: button.dataset.kind, name: button.dataset.name });
      if (!answer.ok) { pressed = false; finish(answer); return; }
      hold = answer.hold;
      timer = setInterval(alive, 1000 * answer.keepalive_s);
      if (!pressed) release();
    }
    async function release() {
      if (!pressed) return;
      pressed = false;
      if (!hold) return;
      const id = hold;
      clearInterval(timer); timer = null;
      await post("/api/hold/" + id + "/release");
      setTimeout(async () => {
        const answer = await post("/api/hold/" + id + "/alive");
        finish(answer.answer || answer);
      }, 400);
    }
    button.addEventListener("pointerdown", (e) => { if (button.setPointerCapture) button.setPointerCapture(e.pointerId); start(e); });
    for (const type of ["pointerup", "pointercancel", "lostpointercapture"]) button.addEventListener(type, release);
    button.addEventListener("keydown", (e) => { if ((e.key === " " || e.key === "Enter") && !e.repeat) start(e); });
    button.addEventListener("keyup", (e) => { if (e.key === " " || e.key === "Enter") release(); });
    button.addEventListener("contextmenu", (e) => e.preventDefault());
    window.addEventListener("blur", release);
    document.addEventListener("visibilitychange", () => { if (document.visibilityState !== "visible") release(); });
  }
  function wire() {
    document.querySelectorAll("button.hold").forEach(holdButton);
    const ack = document.getElementById("ack");
    if (ack) ack.addEventListener("click", async () => {
      const answer = await post("/api/ack");
      document.getElementById("ack-answer").textContent = answer.ok ? fmt(T("acknowledged"), { state: text(answer.state, "state") }) : answer.error;
    });
    const stop = document.getElementById("stop");
    if (stop) stop.addEventListener("click", async () => {
      const answer = await post("/api/stop");
      const out = document.getElementById("hold-answer");
      if (out) out.textContent = answer.ok ? fmt(T("stopped"), { what: answer.stopped ? [].concat(answer.stopped).map(mechanism).join(", ") : T("done") }) : answer.error;
    });
  }
  // -- the player's view: its live fragment polled (no login, no event stream), its hands when they change ----
  const POLL_MS = 2000;
  let polling = false;
  async function poll() {
    if (polling || document.visibilityState !== "visible") return;
    polling = true;
    try {
      const r = await fetch("/view/live", { credentials: "same-origin", cache: "no-store" });
      if (!r.ok) return;
      const box = document.getElementById("player-live");
      const html = await r.text();
      if (!box) return;
      const before = box.dataset.key;
      box.innerHTML = html;
      const banner = box.querySelector("[data-key]");
      const key = banner ? banner.dataset.key : before;
      if (key !== before) {
        box.dataset.key = key;
        const hands = await fetch("/view/hands", { credentials: "same-origin", cache: "no-store" });
        const list = document.getElementById("player-hands");
        if (hands.ok && list) list.innerHTML = await hands.text();
      }
    } catch (err) {
      // (the table is out of reach a moment: the next poll says so when it answers again)
    } finally { polling = false; }
  }
  // -- light or dark: automatic (the phone's setting), dark, light; remembered in a cookie -----------------------
  function wireTheme() {
    const button = document.getElementById("theme");
    if (!button) return;
    const order = ["auto", "dark", "light"];
    const say = () => { const now = document.documentElement.dataset.theme || "auto"; button.title = T(now); button.setAttribute("aria-label", T(now)); };
    say();
    button.addEventListener("click", () => {
      const now = document.documentElement.dataset.theme || "auto";
      const next = order[(order.indexOf(now) + 1) % order.length];
      document.documentElement.dataset.theme = next;
      document.cookie = "mjtable_theme=" + next + "; path=/; max-age=31536000; samesite=lax";
      say();
    });
  }
  wireTheme();
  if (page === "player") {
    setInterval(poll, POLL_MS);
    document.addEventListener("visibilitychange", poll);
  } else if (document.body.dataset.role) { wire(); connect(); }
  void technician;
})();
