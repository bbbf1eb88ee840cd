// The verify page's own check, part 1: what it reads, ported from the firmware so that the phone decides alone:
// tile codes (firmware/tiles/tile.py), SHA-256 (Web Crypto where the page has it, else a plain implementation),
// the reveal (fair_walls.parse_preimage, strictly), the electronic dice from the sealed seed (fair_walls.dice_faces)
// and the hand's record (HandRecord.from_json and parse_action, as strictly: a record the table's check cannot
// read, the page cannot either). Part 2, the deal and the replay, is verify_replay.js. A problem is
// {key, values}: the page words it in its language (verify.js).
"use strict";
(function (root) {
  const SIDES = 4, MAGIC = "mjtable-walls/1", MAX_PREIMAGE = 4096, MAX_ACTIONS = 600;
  const HONOURS = "ESWNCFP", SUITS = "mps", FLOWER_BASE = 34, KINDS = 42, PLAYABLE = 34;
  const KONGS = ["kong", "added_kong", "concealed_kong"];
  const VERBS = ["deal", "draw", "discard", "chow", "pung", "kong", "added_kong", "concealed_kong", "flower",
    "flower_discard", "win", "wall_end", "penalty", "opened", "dead", "follow", "liable", "swap", "void", "show", "won"];
  const TABLE_VERBS = ["wall_end", "follow"];

  class Problem extends Error {
    constructor(key, values) { super(key); this.key = key; this.values = values || {}; }
  }

  // -- tiles (firmware/tiles/tile.py) ----------------------------------------------------------------------------
  function code(kind) {
    if (kind < 27) return String(kind % 9 + 1) + SUITS[Math.floor(kind / 9)];
    if (kind < PLAYABLE) return HONOURS[kind - 27];
    if (kind < KINDS) return String(kind - FLOWER_BASE + 1) + "f";
    throw new Problem("v_bad_tile", { tile: String(kind) });
  }
  const isFlower = (kind) => kind !== null && kind >= FLOWER_BASE && kind < KINDS;
  const BASE = { m: 0, p: 9, s: 18, f: FLOWER_BASE };
  function parseTiles(text) {                    // the compact notation, as tile.parse reads it
    const kinds = [];
    let i = 0;
    while (i < text.length) {
      const c = text[i];
      if ("123456789".includes(c)) {
        let j = i + 1;
        while (j < text.length && "123456789".includes(text[j])) j++;
        const base = j < text.length ? BASE[text[j]] : undefined;
        if (base === undefined || !Object.prototype.hasOwnProperty.call(BASE, text[j]))
          throw new Problem("v_bad_tile", { tile: text });
        if (base === FLOWER_BASE && text.slice(i, j).includes("9")) throw new Problem("v_bad_tile", { tile: text });
        for (const d of text.slice(i, j)) kinds.push(base + Number(d) - 1);
        i = j + 1;
      } else if (HONOURS.includes(c)) { kinds.push(27 + HONOURS.indexOf(c)); i++; }
      else if (/\s/.test(c)) i++;
      else throw new Problem("v_bad_tile", { tile: text });
    }
    if (!kinds.length && text.trim()) throw new Problem("v_bad_tile", { tile: text });
    return kinds;
  }

  // -- SHA-256: Web Crypto where the page has it (https, localhost), else this plain implementation -----------
  const K = new Uint32Array([0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
    0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152,
    0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138,
    0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70,
    0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5,
    0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa,
    0xa4506ceb, 0xbef9a3f7, 0xc67178f2]);
  function sha256Plain(bytes) {
    const h = new Uint32Array([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
      0x5be0cd19]);
    const length = bytes.length, padded = new Uint8Array(Math.ceil((length + 9) / 64) * 64);
    padded.set(bytes);
    padded[length] = 0x80;
    const view = new DataView(padded.buffer);
    view.setUint32(padded.length - 8, Math.floor(length / 0x20000000));
    view.setUint32(padded.length - 4, (length * 8) >>> 0);
    const w = new Uint32Array(64), rot = (x, n) => (x >>> n) | (x << (32 - n));
    for (let off = 0; off < padded.length; off += 64) {
      for (let t = 0; t < 16; t++) w[t] = view.getUint32(off + 4 * t);
      for (let t = 16; t < 64; t++) {
        const s0 = rot(w[t - 15], 7) ^ rot(w[t - 15], 18) ^ (w[t - 15] >>> 3);
        const s1 = rot(w[t - 2], 17) ^ rot(w[t - 2], 19) ^ (w[t - 2] >>> 10);
        w[t] = (w[t - 16] + s0 + w[t - 7] + s1) >>> 0;
      }
      let [a, b, c, d, e, f, g, k] = h;
      for (let t = 0; t < 64; t++) {
        const t1 = (k + (rot(e, 6) ^ rot(e, 11) ^ rot(e, 25)) + ((e & f) ^ (~e & g)) + K[t] + w[t]) >>> 0;
        const t2 = ((rot(a, 2) ^ rot(a, 13) ^ rot(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) >>> 0;
        k = g; g = f; f = e; e = (d + t1) >>> 0; d = c; c = b; b = a; a = (t1 + t2) >>> 0;
      }
      [a, b, c, d, e, f, g, k].forEach((x, i) => { h[i] = (h[i] + x) >>> 0; });
    }
    const out = new Uint8Array(32);
    h.forEach((x, i) => new DataView(out.buffer).setUint32(4 * i, x));
    return out;
  }
  async function sha256(bytes) {
    const subtle = root.crypto && root.crypto.subtle;
    if (subtle) return new Uint8Array(await subtle.digest("SHA-256", bytes));
    return sha256Plain(bytes);
  }
  const hex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  const utf8 = (text) => new TextEncoder().encode(text);

  // -- the preimage (fair_walls.parse_preimage, strictly) ---------------------------------------------------------
  function field(lines, i, name) {
    const line = lines[i];
    if (!line.startsWith(name + " ") || line.length === name.length + 1) throw new Problem("v_encoding", { line: i + 1 });
    return line.slice(name.length + 1);
  }
  function hexField(text, line) {
    if (!/^[0-9a-f]{64}$/.test(text)) throw new Problem("v_encoding", { line });
    return Uint8Array.from(text.match(/../g), (x) => parseInt(x, 16));
  }
  function parsePreimage(text) {
    if (typeof text !== "string" || text.length > MAX_PREIMAGE) throw new Problem("v_encoding", { line: 1 });
    const lines = text.split("\n");
    if (lines.length !== 9 || lines[0] !== MAGIC) throw new Problem("v_encoding", { line: 1 });
    const setId = field(lines, 1, "set");
    const stacksText = field(lines, 2, "stacks");
    if (!/^\s*[+-]?\d+\s*$/.test(stacksText)) throw new Problem("v_encoding", { line: 3 });
    const stacks = parseInt(stacksText, 10);
    if (stacks < 1 || stacks > 18) throw new Problem("v_encoding", { line: 3 });
    const sides = [];
    for (let side = 0; side < SIDES; side++) {
      const tiles = field(lines, 3 + side, "side " + side).split(",");
      if (tiles.length !== 2 * stacks && tiles.length !== 2 * stacks - 1) throw new Problem("v_encoding", { line: 4 + side });
      const kinds = tiles.map((t) => {
        if (t === "?") return null;
        let parsed;
        try { parsed = parseTiles(t); } catch (err) { throw new Problem("v_encoding", { line: 4 + side }); }
        if (parsed.length !== 1 || code(parsed[0]) !== t) throw new Problem("v_encoding", { line: 4 + side });
        return parsed[0];
      });
      const pairs = [];
      for (let i = 0; i < kinds.length; i += 2) pairs.push(kinds.slice(i, i + 2));
      sides.push(pairs);
    }
    const dice = field(lines, 7, "dice"), space = dice.indexOf(" ");
    const mode = space < 0 ? dice : dice.slice(0, space);
    if (mode !== "physical" && mode !== "electronic") throw new Problem("v_encoding", { line: 8 });
    return { setId, sides, diceMode: mode, seed: hexField(space < 0 ? "" : dice.slice(space + 1), 8),
      nonce: hexField(field(lines, 8, "nonce"), 9) };
  }
  async function diceFaces(seed, throws) {        // fair_walls.dice_faces
    const faces = [];
    for (let counter = 0; faces.length < 2 * throws; counter++) {
      const input = new Uint8Array(seed.length + 8);
      input.set(seed);
      input.set(utf8("dice"), seed.length);
      new DataView(input.buffer).setUint32(seed.length + 4, counter);
      for (const byte of await sha256(input)) if (byte < 252 && faces.length < 2 * throws) faces.push(byte % 6 + 1);
    }
    return faces;
  }

  // -- the hand's record: its action lines, as strictly as hand_record.parse_action reads them ------------------
  const bad = () => new Problem("v_bad_line", {});
  function side(word) {
    if (!["0", "1", "2", "3"].includes(word)) throw bad();
    return Number(word);
  }
  function oneTile(word, flowers) {
    const kinds = parseTiles(word);
    if (kinds.length !== 1 || isFlower(kinds[0]) !== Boolean(flowers)) throw bad();
    return kinds[0];
  }
  const none = (rest) => { if (rest.length) throw bad(); };
  const WIN_FLAGS = ["kong_win", "last_tile", "flower_win", "last_of_kind", "kong_discard", "first_turn"];
  function parseAction(line) {
    const words = line.split(/\s+/).filter(Boolean);
    if (!words.length) throw bad();
    if (TABLE_VERBS.includes(words[0])) {
      if (words.length !== 1) throw bad();
      return { verb: words[0], side: null, tile: null, source: null, hand: [], line };
    }
    const who = side(words[0]);
    if (words.length < 2 || !VERBS.includes(words[1]) || TABLE_VERBS.includes(words[1])) throw bad();
    const verb = words[1], rest = words.slice(2);
    let source = null, to = null;
    const from = rest.indexOf("from");
    if (from >= 0) {
      if (from + 1 >= rest.length) throw bad();
      source = side(rest[from + 1]);
      rest.splice(from, 2);
      if (source === who) throw bad();
    }
    const at = rest.indexOf("to");
    if (at >= 0 && (verb === "penalty" || verb === "swap")) {
      if (at + 1 >= rest.length) throw bad();
      to = side(rest[at + 1]);
      rest.splice(at, 2);
      if (to === who) throw bad();
    }
    const claim = ["chow", "pung", "kong"].includes(verb);
    if ((claim && source === null) || (source !== null && !claim && verb !== "win")) throw bad();
    const action = { verb, side: who, tile: null, source, hand: [], line };
    if (verb === "win") {
      if (!rest.length) throw bad();
      action.tile = oneTile(rest.shift(), false);
      while (rest.length) {
        const word = rest.shift();
        if (word === "hand") {
          if (!rest.length) throw bad();
          const text = rest.shift(), hand = text === "-" ? [] : parseTiles(text);
          if (hand.some((k) => k >= PLAYABLE) || hand.length > 13) throw bad();
        } else if (word === "flowers") {
          if (!rest.length || !/^[0-8]$/.test(rest[0])) throw bad();
          rest.shift();
        } else if (!WIN_FLAGS.includes(word)) throw bad();
      }
      return action;
    }
    if (["flower_discard", "opened", "dead", "liable", "won"].includes(verb)) { none(rest); return action; }
    if (verb === "void") { if (rest.length !== 1 || !["m", "p", "s"].includes(rest[0])) throw bad(); return action; }
    if (verb === "swap" && to === null) throw bad();
    if (verb === "penalty") {
      if (rest.length !== 1 || !/^[\p{L}\p{N}_]+$/u.test(rest[0]) || !/[\p{L}\p{N}]/u.test(rest[0]) || rest[0].length > 40) throw bad();
      return action;
    }
    if (!rest.length) throw bad();
    const word = rest.shift();
    none(rest);
    if (verb === "deal") {
      action.hand = parseTiles(word);
      if (action.hand.length > 22) throw bad();
    } else if (verb === "swap" || verb === "show") {
      const hand = parseTiles(word);
      if (hand.some((k) => k >= PLAYABLE) || hand.length > (verb === "swap" ? 3 : 14)) throw bad();
    } else if (verb === "draw" && word === "?") {
      return action;
    } else if (verb === "chow") {
      const t = parseTiles(word).sort((x, y) => x - y);
      if (t.length !== 3 || t[1] !== t[0] + 1 || t[2] !== t[0] + 2 || t[0] >= 27 || t[0] % 9 > 6) throw bad();
      action.tile = t[0];
    } else action.tile = oneTile(word, verb === "flower");
    return action;
  }
  function inPayingOrder(actions) {               // hand_record.in_paying_order: wins on one discard as paid
    const out = [], run = [];
    const flush = () => {
      run.map((a, i) => [a, i]).sort((x, y) => ((x[0].side - x[0].source + 4) % 4) - ((y[0].side - y[0].source + 4) % 4)
        || x[1] - y[1]).forEach(([a]) => out.push(a));
      run.length = 0;
    };
    for (const a of actions) {
      const oneDiscard = a.verb === "win" && a.source !== null;
      if (!(oneDiscard && run.length && run[0].source === a.source && run[0].tile === a.tile)) flush();
      (oneDiscard ? run : out).push(a);
    }
    flush();
    return out;
  }
  const RECORD_FIELDS = ["rules", "hand", "dealer", "round_wind", "streak", "long_hair", "chips", "actions", "dealt"];
  function whole(data, name, low, high) {         // hand_record._int
    const value = data[name] === undefined ? low : data[name];
    if (!Number.isInteger(value) || value < low || value > high) throw new Problem("v_bad_record", { what: name });
    return value;
  }
  function readRecord(data) {                     // HandRecord.from_json: the fields, then every action line
    const fail = (what) => new Problem("v_bad_record", { what });
    if (!data || typeof data !== "object" || Array.isArray(data)) throw fail("record");
    const unknown = Object.keys(data).filter((k) => !RECORD_FIELDS.includes(k)).sort();
    if (unknown.length) throw fail(unknown[0]);
    if (typeof data.rules !== "string" || !data.rules) throw fail("rules");
    if (!["E", "S", "W", "N"].includes(data.round_wind === undefined ? "E" : data.round_wind)) throw fail("round_wind");
    const chips = data.chips === undefined ? null : data.chips;
    if (chips !== null && !(Array.isArray(chips) && chips.length === SIDES
        && chips.every((c) => Number.isInteger(c) && Math.abs(c) <= 1e12))) throw fail("chips");
    const lines = data.actions === undefined ? [] : data.actions;
    if (!Array.isArray(lines) || !lines.every((a) => typeof a === "string")) throw fail("actions");
    if (lines.length > MAX_ACTIONS) throw fail("actions");
    const dealt = data.dealt || {};
    if (typeof dealt !== "object" || Array.isArray(dealt) || Object.entries(dealt).some(([k, v]) =>
      !["0", "1", "2", "3"].includes(k) || typeof v !== "string" || v.length > 60)) throw fail("dealt");
    whole(data, "hand", 0, 1e9);
    const dealer = whole(data, "dealer", 0, SIDES - 1);
    whole(data, "streak", 0, 1000);
    whole(data, "long_hair", 0, 1000);
    const actions = lines.map((line, i) => {
      try { return parseAction(line); } catch (err) { throw fail("action " + i); }
    });
    return { rules: data.rules, dealer, dealt, actions: inPayingOrder(actions) };
  }

  root.MjReplay = { Problem, code, isFlower, parseTiles, sha256, sha256Plain, hex, utf8, parsePreimage, diceFaces,
    readRecord, KONGS, SIDES };
})(typeof window !== "undefined" ? window : globalThis);
