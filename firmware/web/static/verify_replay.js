// The verify page's own check, part 2: a port of firmware/rules/fair_check.py with the dealing it uses
// (firmware/tiles/dealing.py, wall.py): the reveal hashes to the commitment, electronic dice are the sealed seed's,
// and the revealed walls, broken and dealt with the dice by the table's own procedure and the rule set's
// parameters, give exactly the record's starting hands, the flowers replaced at the start and every draw in
// order: a live draw from the next place of the live wall, a replacement (after a flower or a kong) from the
// tail; a wall_end only when the wall really ran out. MjReplay.check(hand, deal) takes what /verify/data sends
// and gives {pending, draws, problems}; each problem {key, values} names what differs (a side's hand, an action,
// the dice). Needs verify_walls.js first.
"use strict";
(function (R) {
  const { Problem, code, isFlower, SIDES, KONGS } = R;
  const key = (side, stack, level) => side + "/" + stack + "/" + level;

  // -- the walls (wall.py): kinds (or null where not read) by place; stacks 1.. from the owner's right -----------
  function wallFromSides(sides) {
    const tiles = new Map();
    sides.forEach((stacks, side) => stacks.forEach((stack, i) => {
      tiles.set(key(side, i + 1, "bottom"), stack[0]);
      if (stack.length > 1) tiles.set(key(side, i + 1, "top"), stack[1]);
    }));
    return { stacksPerSide: Math.max(...sides.map((s) => s.length)), tiles,
      levels: (side, stack) => ["top", "bottom"].filter((lv) => tiles.has(key(side, stack, lv))),
      at: (p) => tiles.get(key(p.side, p.stack, p.level)) };
  }

  // -- the break and the deal (dealing.py) -------------------------------------------------------------------------
  function findBreak(rules, dice, dealer) {
    if (dice.some((d) => !(d >= 1 && d <= 6))) throw new Problem("v_cannot_deal", {});
    const offset = (total) => (total - 1) % SIDES;
    if (rules.throws === 1) {
      if (dice.length !== 2) throw new Problem("v_cannot_deal", {});
      const total = dice[0] + dice[1];
      return { wallSide: (dealer + offset(total)) % SIDES,
        stack: rules.stack_by === "smaller_die" ? Math.min(...dice) : total };
    }
    if (dice.length !== 4) throw new Problem("v_cannot_deal", {});
    const first = dice[0] + dice[1], thrower = (dealer + offset(first)) % SIDES;
    return { wallSide: thrower, stack: first + dice[2] + dice[3] };
  }
  function liveSequence(wall, brk) {
    const order = [], n = wall.stacksPerSide;
    if (n < 1) throw new Problem("v_cannot_deal", {});
    let side = brk.wallSide, stack = brk.stack;
    while (stack > n) { stack -= n; side = (side + SIDES - 1) % SIDES; }
    for (let i = 0; i < SIDES * n; i++) {
      for (const level of wall.levels(side, stack)) order.push({ side, stack, level, id: key(side, stack, level) });
      stack += 1;
      if (stack > n) { stack = 1; side = (side + SIDES - 1) % SIDES; }
    }
    return order;
  }
  function deal(wall, rules, dice, dealer) {
    const order = liveSequence(wall, findBreak(rules, dice, dealer));
    const seats = [0, 1, 2, 3].map((i) => (dealer + i) % SIDES), hands = {};
    for (const s of seats) hands[s] = [];
    let i = 0;
    for (let round = 0; round < 3; round++) for (const s of seats) { hands[s].push(...order.slice(i, i + 4)); i += 4; }
    const next = order.slice(i, i + 5);          // 跳牌: the dealer the tops of the 1st and 3rd next stacks
    hands[seats[0]].push(next[0], next[4]);
    for (let k = 1; k < 4; k++) hands[seats[k]].push(next[k]);
    for (const s of seats) if (hands[s].some((p) => p === undefined)) throw new Problem("v_cannot_deal", {});
    const dealtIds = new Set(seats.flatMap((s) => hands[s].map((p) => p.id)));
    const live = order.filter((p) => !dealtIds.has(p.id)), tail = [];
    for (const p of [...live].reverse()) {       // by stack from the far end, top before bottom in each
      const last = tail[tail.length - 1];
      if (last && last.side === p.side && last.stack === p.stack && p.level === "top") tail.splice(tail.length - 1, 0, p);
      else tail.push(p);
    }
    const taken = new Set();
    let kongs = 0;
    const remaining = () => Math.max(0, live.length - taken.size - (rules.kept_tail || 0) - (rules.kept_per_kong || 0) * kongs);
    return {
      hands, remaining,
      handTiles: (s) => hands[s].map((p) => wall.at(p)),
      draw() {
        if (remaining() === 0) return null;
        const p = live.find((q) => !taken.has(q.id));
        taken.add(p.id);
        return p;
      },
      replacement(kong) {
        if (kong) kongs += 1;
        if (taken.size >= live.length) return null;
        const p = tail.find((q) => !taken.has(q.id));
        taken.add(p.id);
        return p;
      },
    };
  }

  // -- the check (fair_check.check_hand) ---------------------------------------------------------------------------
  const tileCode = (kind) => (kind === null || kind === undefined ? "?" : code(kind));
  const place = (p) => ({ side: p.side, stack: p.stack, level: p.level });
  const faces = (dice) => dice.join("+") || "–";

  async function check(hand, rules) {
    const out = { hand: hand.hand, pending: false, draws: 0, problems: [] };
    const problem = (k, values) => out.problems.push({ key: k, values: values || {} });
    try {
      await checkInto(hand, rules, out, problem);
    } catch (err) {
      if (!(err instanceof Problem)) throw err;
      problem(err.key, err.values);
    }
    out.ok = !out.problems.length && !out.pending;
    return out;
  }

  async function checkInto(hand, rules, out, problem) {
    if (!hand.commitment) return problem("v_no_commitment");
    if (hand.reveal === null || hand.reveal === undefined) { out.pending = true; return; }
    if (R.hex(await R.sha256(R.utf8(hand.reveal))) !== hand.commitment) return problem("v_hash");
    const walls = R.parsePreimage(hand.reveal);
    if (walls.setId !== hand.set_id) problem("v_set", { revealed: walls.setId, dealt: hand.set_id });
    if (!hand.record) return problem("v_no_record");
    const record = R.readRecord(hand.record);
    if (!rules) return problem("v_no_rules", { rules: String(record.rules) });
    if (record.dealer !== hand.dealer) problem("v_dealer", { record: record.dealer, side: hand.dealer });
    const dice = hand.dice;
    if (hand.dice_by === "electronic") {
      const expected = await R.diceFaces(walls.seed, rules.throws);
      if (faces(dice) !== faces(expected)) problem("v_dice_seed", { dice: faces(dice), seed: faces(expected) });
    } else if (hand.dice_by !== "physical") problem("v_dice_by", { by: String(hand.dice_by) });
    const wall = wallFromSides(walls.sides);
    let dealt;
    try {
      dealt = deal(wall, rules, dice, hand.dealer);
    } catch (err) {
      if (err instanceof Problem) return problem("v_cannot_deal", { dice: faces(dice) });
      throw err;
    }
    for (const side of Object.keys(record.dealt).map(Number).sort()) {
      const mine = dealt.handTiles(side).map(tileCode).join("");
      if (mine !== record.dealt[side]) problem("v_dealt", { side, dealt: record.dealt[side], walls: mine, dice: faces(dice) });
    }
    if (record.actions.some((a) => a.verb === "deal")) replay(record.actions, wall, dealt, hand.dealer, out, problem);
  }

  function replay(actions, wall, dealt, dealer, out, problem) {
    let i = 0;
    const next = () => { const a = i < actions.length ? actions[i] : null; i += 1; return a; };
    function expect(verb, side, tile, where) {
      const a = next();
      if (a === null || a.verb !== verb || a.side !== side || a.tile !== tile) {
        problem("v_action", { n: i, side, verb, tile: tileCode(tile), where, got: a === null ? null : a.line.trim() });
        return false;
      }
      out.draws += 1;
      return true;
    }
    function fromTail(side, kong) {
      for (;;) {
        const p = dealt.replacement(kong);
        kong = false;
        if (p === null) {
          const a = next();
          if (a === null || a.verb !== "wall_end") problem("v_tail_out", { n: i });
          return false;
        }
        const kind = wall.at(p);
        if (isFlower(kind)) {
          if (!expect("flower", side, kind, { from: "tail", ...place(p) })) return false;
          continue;
        }
        return expect("draw", side, kind, { from: "tail", ...place(p) });
      }
    }
    for (const side of Object.keys(dealt.hands).map(Number).sort()) {
      const a = next();
      const want = dealt.handTiles(side).filter((k) => k === null || !isFlower(k))
        .sort((x, y) => (x === null) - (y === null) || x - y);
      if (a === null || a.verb !== "deal" || a.side !== side || a.hand.join() !== want.join()) {
        problem("v_start_hand", { n: i, side });
        return;
      }
    }
    for (let offset = 0; offset < SIDES; offset++) {     // 补花: the dealer first, then counter-clockwise
      const side = (dealer + offset) % SIDES;
      for (const kind of dealt.handTiles(side)) {
        if (isFlower(kind) && (!expect("flower", side, kind, { from: "dealt" }) || !fromTail(side, false))) return;
      }
    }
    let after = null;                                    // a flower or a kong: the next tile comes from the tail
    for (let a = next(); a !== null; a = next()) {
      if (a.verb === "draw" || a.verb === "flower") {
        i -= 1;
        let ok;
        if (after !== null) ok = fromTail(a.side, KONGS.includes(after));
        else {
          const p = dealt.draw();
          if (p === null) { problem("v_live_out", { n: i + 1 }); return; }
          const kind = wall.at(p);
          ok = expect(isFlower(kind) ? a.verb : "draw", a.side, kind, { from: "live", ...place(p) });
          if (ok && a.verb === "flower") ok = fromTail(a.side, false);
        }
        if (!ok) return;
        after = null;
      } else if (KONGS.includes(a.verb)) after = a.verb;
      else if (a.verb === "wall_end") {
        const left = dealt.remaining();
        if (after === null && left) problem("v_wall_end", { n: i, left });
        return;
      } else after = null;
    }
  }

  Object.assign(R, { wallFromSides, findBreak, liveSequence, deal, check });
})(window.MjReplay);
