// The verify page: the whole check of a hand in this browser, as mjtable verify does it. The reveal's SHA-256 is
// compared with the commitment kept (its UTF-8 bytes, lines joined by "\n", no final newline: exactly what the
// table hashed); then, when the page is for a hand, its seal, record and dealing rules (/verify/data, no verdict)
// are replayed against the revealed walls and dice (verify_walls.js, verify_replay.js): every starting hand and
// every draw. What differs is said in the page's language (#words, from the catalogue).
"use strict";
(function () {
  const form = document.getElementById("verify");
  if (!form || !window.MjReplay) return;
  const W = JSON.parse((document.getElementById("words") || {}).textContent || "{}");
  const T = (k) => (W.text && W.text[k]) || k;
  const fmt = (template, params) => template.replace(/%\((\w+)\)[sd]/g, (_, name) => (params[name] === undefined ? "" : String(params[name])));
  const who = (side) => (W.positions ? W.positions[Number(side) % 4] : String(side));
  const show = (id) => {
    for (const el of form.querySelectorAll(".verdict")) el.hidden = el.id !== id;
  };
  const replayBox = document.getElementById("verify-replay");
  let data = null;                                  // what /verify/data sent for this hand (null: none)
  const loaded = form.dataset.hand ? fetch("/verify/data?hand=" + encodeURIComponent(form.dataset.hand),
    { credentials: "same-origin", cache: "no-store" }).then((r) => (r.ok ? r.json() : null)).then((answer) => {
    data = answer && answer.ok ? answer.hand : null;
  }).catch(() => { data = null; }) : Promise.resolve();

  function where(w) {
    if (w.from === "dealt") return T("v_where_dealt");
    const at = fmt(T("v_place"), { who: who(w.side), stack: w.stack, level: T(w.level === "top" ? "v_top" : "v_bottom") });
    return fmt(T(w.from === "live" ? "v_where_live" : "v_where_tail"), { place: at });
  }
  function words(problem) {                         // a problem of MjReplay.check in this page's language
    const v = { ...problem.values };
    if (v.side !== undefined) v.who = who(v.side);
    if (problem.key === "v_action") {
      v.want = fmt(T(v.verb === "flower" ? "v_want_flower" : "v_want_draw"), { who: who(v.side), tile: v.tile });
      v.where = where(v.where);
      v.got = v.got === null ? T("v_record_end") : v.got;
    }
    if (problem.key === "v_dealer") { v.record = who(v.record); v.deal = who(v.side); }
    return fmt(T(problem.key), v);
  }
  function say(node, text) {
    node.replaceChildren();
    if (text) node.append(text);
  }
  async function replay(commitment, reveal) {
    const title = replayBox.querySelector(".title"), list = replayBox.querySelector("ul");
    list.replaceChildren();
    await loaded;
    if (!data || !data.record) {
      replayBox.className = "verdict quiet";
      say(title, T("v_hash_only"));
      return;
    }
    const result = await window.MjReplay.check({ ...data, commitment, reveal }, data.deal);
    replayBox.dataset.ok = String(result.ok);
    if (result.ok) {
      replayBox.className = "verdict ok";
      say(title, fmt(T("v_ok"), { dice: data.dice.join("+"), n: result.draws }));
    } else {
      replayBox.className = "verdict error";
      say(title, T("v_not_ok"));
      for (const problem of result.problems) list.append(Object.assign(document.createElement("li"), { textContent: words(problem) }));
    }
  }
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    form.dataset.state = "checking";
    const commitment = form.elements.commitment.value.trim().toLowerCase();
    const reveal = form.elements.reveal.value.replace(/\r\n?/g, "\n").replace(/\n+$/, "");
    replayBox.hidden = true;
    delete replayBox.dataset.ok;
    const hex = window.MjReplay.hex(await window.MjReplay.sha256(window.MjReplay.utf8(reveal)));
    form.elements.computed.value = hex;
    show(hex === commitment ? "verify-ok" : "verify-bad");
    if (hex === commitment) {
      await replay(commitment, reveal);
      replayBox.hidden = false;
    }
    form.dataset.state = "done";
  });
})();
