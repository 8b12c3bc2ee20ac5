// The report's timeline: every rank's states over time on a canvas,
// zoomable and pannable, with the phases and the slow instances marked.
// The data is the JSON of report.timelineJSON: per rank, base64 segments,
// each a varint duration in ticks and a code byte (the call's kind, 64 for
// its waiting part, 128 for a span merged from shorter ones).
(function () {
  "use strict";
  var dataEl = document.getElementById("tl-data");
  if (!dataEl) return;
  var D = JSON.parse(dataEl.textContent);
  D.phases = D.phases || [];
  D.slow = D.slow || [];
  D.causes = D.causes || [];
  // The ranks whose delays caused the most waiting, marked on the rank axis.
  var causeOf = {};
  D.causes.forEach(function (c, i) { if (!(c.rank in causeOf)) causeOf[c.rank] = i; });
  var box = document.getElementById("tl");
  var canvas = document.getElementById("tl-canvas");
  var tip = document.getElementById("tl-tip");
  var viewText = document.getElementById("tl-view");
  var ctx = canvas.getContext("2d");
  var n = D.lanes.length;
  var WAIT = 64, MERGED = 128, KIND = 63, WAITING = 4, numStates = D.states.length;
  var waitColor = D.states[WAITING].color;

  // The state of each kind, as report.stateOf gives it.
  var kindState = D.kind_states;
  function stateOf(code) { return (code & WAIT) ? WAITING : kindState[code & KIND]; }

  // Decode the lanes: segment i of a lane spans [t[i], t[i+1]).
  var lanes = [];
  var maxTotal = 0;
  for (var r = 0; r < n; r++) {
    var bin = atob(D.lanes[r]);
    var ts = [], cs = [];
    var t = D.starts[r], p = 0;
    while (p < bin.length) {
      var d = 0, mul = 1, b;
      do { b = bin.charCodeAt(p++); d += (b & 127) * mul; mul *= 128; } while (b & 128);
      ts.push(t);
      cs.push(bin.charCodeAt(p++));
      t += d;
    }
    ts.push(t);
    lanes.push({ t: Float64Array.from(ts), c: Uint8Array.from(cs) });
    var tot = 0;
    for (var s = 0; s < D.totals[r].length; s++) tot += D.totals[r][s];
    maxTotal = Math.max(maxTotal, tot);
  }
  var span = Math.max(D.span, 1);

  // Layout, in CSS pixels.
  var RULER = 24, PHASES = 18, SLOW = 14, LEFT = 64, RIGHT = 140, GAP = 6;
  var lanesTop = RULER + PHASES + SLOW + 4;
  var lanesH = Math.min(Math.max(n * 14, 120), 640);
  var W = 0, H = lanesTop + lanesH + 4;
  // The view: ticks [t0, t1), ranks [r0, r1).
  var v = { t0: 0, t1: span, r0: 0, r1: n };
  var mouse = null, drag = null, marked = -1;

  function plotW() { return Math.max(W - LEFT - RIGHT - GAP, 50); }
  function xOf(t) { return LEFT + (t - v.t0) / (v.t1 - v.t0) * plotW(); }
  function tOf(x) { return v.t0 + (x - LEFT) / plotW() * (v.t1 - v.t0); }
  function laneH() { return lanesH / (v.r1 - v.r0); }
  function yOf(r) { return lanesTop + (r - v.r0) * laneH(); }
  function rOf(y) { return v.r0 + (y - lanesTop) / laneH(); }
  function sec(t) { return t * D.tick; }

  function fmt(s, step) {
    if (s === 0) return "0 s";
    var a = Math.abs(step || s), u = "s", f = 1;
    if (a < 1e-6) { u = "ns"; f = 1e9; } else if (a < 1e-3) { u = "µs"; f = 1e6; } else if (a < 1) { u = "ms"; f = 1e3; }
    // With a step, the decimals it needs; without, four significant digits.
    var digits = step ? Math.max(0, Math.ceil(-Math.log10(step * f) + 1e-9)) : Math.max(0, 3 - Math.floor(Math.log10(Math.abs(s * f))));
    return (s * f).toFixed(Math.min(digits, 6)) + " " + u;
  }

  function resize() {
    var dpr = window.devicePixelRatio || 1;
    W = box.clientWidth || 1000;
    canvas.style.height = H + "px";
    canvas.width = Math.round(W * dpr);
    canvas.height = Math.round(H * dpr);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    draw();
  }

  function clampView() {
    var w = Math.min(Math.max(v.t1 - v.t0, Math.max(span * 1e-9, 2)), span);
    if (v.t0 < 0) v.t0 = 0;
    if (v.t0 + w > span) v.t0 = span - w;
    v.t1 = v.t0 + w;
    var h = Math.min(Math.max(v.r1 - v.r0, 1), n);
    if (v.r0 < 0) v.r0 = 0;
    if (v.r0 + h > n) v.r0 = n - h;
    v.r1 = v.r0 + h;
  }

  // A lane's first segment ending after t.
  function first(l, t) {
    var lo = 0, hi = l.c.length;
    while (lo < hi) { var m = (lo + hi) >> 1; if (l.t[m + 1] <= t) lo = m + 1; else hi = m; }
    return lo;
  }

  // drawLane paints one rank's visible segments; spans narrower than a
  // pixel are summed per pixel and the pixel painted in its dominant state.
  function drawLane(l, y, h) {
    var pw = plotW(), scale = pw / (v.t1 - v.t0), painted = 0;
    var acc = [0, 0, 0, 0, 0], accPx = -1;
    var runX = 0, runW = 0, runC = -1;
    function fill(x, w, st) {
      if (st === runC && Math.abs(runX + runW - x) < 0.01) { runW += w; return; }
      if (runC >= 0) {
        // Whole pixels: fractional edges would leave light seams between spans.
        var a = Math.round(LEFT + runX), b = Math.max(Math.round(LEFT + runX + runW), a + 1);
        ctx.fillStyle = D.states[runC].color;
        ctx.fillRect(a, y, b - a, h);
        painted++;
      }
      runX = x; runW = w; runC = st;
    }
    function flushAcc() {
      if (accPx < 0) return;
      var best = 0;
      for (var k = 1; k < 5; k++) if (acc[k] > acc[best]) best = k;
      fill(accPx, 1, best);
      acc[0] = acc[1] = acc[2] = acc[3] = acc[4] = 0;
      accPx = -1;
    }
    for (var i = first(l, v.t0); i < l.c.length && l.t[i] < v.t1; i++) {
      var x0 = (Math.max(l.t[i], v.t0) - v.t0) * scale, x1 = (Math.min(l.t[i + 1], v.t1) - v.t0) * scale;
      var st = stateOf(l.c[i]);
      if (x1 - x0 >= 1) {
        var px0 = Math.floor(x0);
        if (accPx >= 0 && accPx === px0) { acc[st] += px0 + 1 - x0; flushAcc(); x0 = px0 + 1; }
        flushAcc();
        if (x1 > x0) fill(x0, x1 - x0, st);
        continue;
      }
      var px = Math.floor(x0);
      if (px !== accPx) { flushAcc(); accPx = px; }
      acc[st] += x1 - x0;
    }
    flushAcc();
    fill(0, 0, -2);
    return painted;
  }

  // accumulate adds a lane's visible time by state to the pixel columns
  // of cover (per column, five states); it reports whether the lane has
  // any visible segment.
  var cover = new Float64Array(0);
  function accumulate(l) {
    var pw = Math.ceil(plotW()), scale = plotW() / (v.t1 - v.t0), any = false;
    if (cover.length < pw * 5) cover = new Float64Array(pw * 5);
    for (var i = first(l, v.t0); i < l.c.length && l.t[i] < v.t1; i++) {
      var x0 = (Math.max(l.t[i], v.t0) - v.t0) * scale, x1 = Math.min((Math.min(l.t[i + 1], v.t1) - v.t0) * scale, pw);
      var st = stateOf(l.c[i]);
      any = true;
      for (var px = Math.floor(x0); px < x1; px++) {
        cover[px * 5 + st] += Math.min(x1, px + 1) - Math.max(x0, px);
      }
    }
    return any;
  }

  // paintRow paints a row of pixels from cover, each column in its
  // dominant state, and clears cover.
  function paintRow(y, h) {
    var pw = Math.ceil(plotW()), runX = 0, runC = -1, painted = 0;
    for (var px = 0; px <= pw; px++) {
      var best = -1;
      if (px < pw) {
        var most = 0;
        for (var k = 0; k < 5; k++) {
          if (cover[px * 5 + k] > most) { most = cover[px * 5 + k]; best = k; }
          cover[px * 5 + k] = 0;
        }
      }
      if (best === runC) continue;
      if (runC >= 0) { ctx.fillStyle = D.states[runC].color; ctx.fillRect(LEFT + runX, y, px - runX, h); painted++; }
      runX = px; runC = best;
    }
    return painted;
  }

  function niceStep(raw) {
    var mag = Math.pow(10, Math.floor(Math.log10(raw)));
    var steps = [1, 2, 5, 10];
    for (var i = 0; i < steps.length; i++) if (steps[i] * mag >= raw) return steps[i] * mag;
    return 10 * mag;
  }

  function draw() {
    ctx.clearRect(0, 0, W, H);
    ctx.font = "12px system-ui, sans-serif";
    ctx.textBaseline = "middle";
    var pw = plotW();
    // The time ruler.
    var s0 = sec(v.t0), s1 = sec(v.t1);
    var step = niceStep((s1 - s0) / Math.max(pw / 110, 1));
    ctx.fillStyle = "#1d1d1f";
    ctx.strokeStyle = "#d0d4d9";
    for (var s = Math.ceil(s0 / step) * step; s <= s1; s += step) {
      var x = xOf(s / D.tick);
      ctx.beginPath(); ctx.moveTo(x + 0.5, RULER - 6); ctx.lineTo(x + 0.5, lanesTop + lanesH); ctx.stroke();
      ctx.textAlign = "center";
      ctx.fillText(fmt(s, step), x, RULER / 2 - 1);
    }
    ctx.textAlign = "right";
    ctx.fillStyle = "#5f6368";
    ctx.fillText("phase", LEFT - 6, RULER + PHASES / 2);
    ctx.fillText("slow", LEFT - 6, RULER + PHASES + SLOW / 2);
    // The phases.
    ctx.save();
    ctx.beginPath(); ctx.rect(LEFT, 0, pw, H); ctx.clip();
    D.phases.forEach(function (ph, i) {
      var x0 = xOf(ph.start / D.tick), x1 = xOf(ph.end / D.tick);
      ctx.fillStyle = i % 2 ? "#c8ccd2" : "#e4e6ea";
      ctx.fillRect(x0, RULER + 1, Math.max(x1 - x0, 1), PHASES - 2);
      var label = "phase " + ph.number + (ph.function ? " " + ph.function : "");
      if (x1 - x0 > ctx.measureText(label).width + 8) {
        ctx.fillStyle = "#1d1d1f"; ctx.textAlign = "left";
        ctx.fillText(label, Math.max(x0, LEFT) + 4, RULER + PHASES / 2);
      }
    });
    // The slow instances.
    var slowColor = D.slow_color;
    D.slow.forEach(function (sl, i) {
      var x0 = xOf(sl.start / D.tick), x1 = Math.max(xOf(sl.end / D.tick), x0 + 2);
      ctx.fillStyle = slowColor;
      ctx.fillRect(x0, RULER + PHASES + 2, x1 - x0, SLOW - 4);
    });
    ctx.restore();
    // The lanes.
    var lh = laneH(), drawn = 0, segs = 0;
    var gap = lh >= 6 ? 1 : 0;
    ctx.save();
    ctx.beginPath(); ctx.rect(LEFT, lanesTop, pw, lanesH); ctx.clip();
    var rFirst = Math.floor(v.r0), rLast = Math.min(Math.ceil(v.r1), n);
    if (lh >= 1) {
      for (var r = rFirst; r < rLast; r++) {
        var painted = drawLane(lanes[r], yOf(r), Math.max(lh - gap, 1));
        segs += painted;
        if (painted > 0) drawn++;
      }
    } else {
      // Lanes thinner than a pixel: each row of pixels shows the ranks
      // it covers, each pixel in their dominant state.
      var rows = Math.ceil(lanesH);
      for (var y = 0; y < rows; y++) {
        var a = Math.max(Math.ceil(rOf(lanesTop + y) - 1e-9), rFirst), b = Math.min(Math.ceil(rOf(lanesTop + y + 1) - 1e-9), rLast);
        if (y === rows - 1) b = rLast;
        if (b <= a) continue;
        for (var r = a; r < b; r++) if (accumulate(lanes[r])) drawn++;
        segs += paintRow(lanesTop + y, 1);
      }
    }
    // The slow instances over their ranks.
    D.slow.forEach(function (sl, i) {
      var x0 = xOf(sl.start / D.tick), x1 = Math.max(xOf(sl.end / D.tick), x0 + 2);
      ctx.strokeStyle = slowColor;
      ctx.lineWidth = i === marked ? 3 : 1.5;
      if (!sl.ranks) {
        ctx.strokeRect(x0, lanesTop + 1, x1 - x0, lanesH - 2);
      } else if (lh < 3) {
        // Lanes too thin to outline one by one: the span of the ranks.
        var lo = Math.min.apply(null, sl.ranks), hi = Math.max.apply(null, sl.ranks) + 1;
        ctx.strokeRect(x0, yOf(lo), x1 - x0, Math.max(yOf(hi) - yOf(lo), 1));
      } else {
        sl.ranks.forEach(function (rk) { if (rk >= rFirst && rk < rLast) ctx.strokeRect(x0, yOf(rk), x1 - x0, lh); });
      }
    });
    ctx.lineWidth = 1;
    ctx.restore();
    // The rank axis: as many labels as fit.
    ctx.fillStyle = "#1d1d1f"; ctx.textAlign = "right";
    var every = Math.max(1, Math.ceil(14 / lh));
    every = [1, 2, 4, 5, 8, 10, 16, 20, 25, 32, 50, 64, 100, 128, 200, 256, 500, 512, 1000, 1024].find(function (k) { return k >= every; }) || every;
    // Root causes first: the rank in the waiting colour, with a mark,
    // whatever the labels' spacing; a costlier cause's mark keeps its
    // place, one that would overlap it is left to the tooltip, and so are
    // the plain labels that would.
    var marks = [];
    D.causes.forEach(function (c) {
      if (c.rank < rFirst || c.rank >= rLast) return;
      var y = yOf(c.rank) + Math.min(Math.max(lh, 1), 14) / 2;
      if (marks.some(function (m) { return Math.abs(m.y - y) < 12; })) return;
      marks.push({ y: y, rank: c.rank });
    });
    for (var r2 = Math.ceil(rFirst / every) * every; r2 < rLast; r2 += every) {
      var ly = yOf(r2) + Math.min(lh, 14) / 2;
      if (!marks.some(function (m) { return Math.abs(m.y - ly) < 12; })) ctx.fillText(String(r2), LEFT - 6, ly);
    }
    ctx.fillStyle = waitColor; ctx.font = "bold 12px system-ui, sans-serif";
    marks.forEach(function (m) { ctx.fillText("▶ " + m.rank, LEFT - 4, m.y); });
    ctx.font = "12px system-ui, sans-serif";
    ctx.save(); ctx.translate(12, lanesTop + lanesH / 2); ctx.rotate(-Math.PI / 2);
    ctx.textAlign = "center"; ctx.fillStyle = "#5f6368"; ctx.fillText("rank", 0, 0); ctx.restore();
    // Each rank's time by state, right of the lanes.
    var bx = LEFT + pw + GAP, bw = RIGHT - 8;
    ctx.fillStyle = "#5f6368"; ctx.textAlign = "left";
    ctx.fillText("time by state", bx, RULER + PHASES / 2);
    // A bar per lane, or per row of pixels where lanes are thinner: the
    // mean of the ranks the row covers.
    var step = Math.max(1, 1 / lh);
    for (var rr = v.r0; rr < rLast; rr += step) {
      var ra = Math.max(Math.floor(rr), rFirst), rb = Math.min(Math.max(Math.floor(rr + step), ra + 1), rLast);
      var x = bx, y0 = Math.round(yOf(ra)), y1 = Math.max(Math.round(yOf(rb)), y0 + 1);
      for (var k = 0; k < numStates; k++) {
        var sum = 0;
        for (var q = ra; q < rb; q++) sum += D.totals[q][k];
        var w = maxTotal > 0 ? sum / (rb - ra) / maxTotal * bw : 0;
        ctx.fillStyle = D.states[k].color;
        ctx.fillRect(x, y0, w, lh >= 1 ? Math.max(lh - gap, 1) : y1 - y0);
        x += w;
      }
    }
    // A span being selected on the ruler or the rank axis.
    if (drag && drag.mode === "time") {
      ctx.fillStyle = "rgba(11,87,208,0.15)";
      ctx.fillRect(Math.min(drag.x0, drag.x), 0, Math.abs(drag.x - drag.x0), lanesTop + lanesH);
    } else if (drag && drag.mode === "ranks") {
      ctx.fillStyle = "rgba(11,87,208,0.15)";
      ctx.fillRect(0, Math.min(drag.y0, drag.y), LEFT + pw, Math.abs(drag.y - drag.y0));
    }
    viewText.textContent = fmt(s0) + " – " + fmt(s1) + " (" + fmt(s1 - s0) + ") · ranks " + rFirst + "–" + (rLast - 1);
    canvas.setAttribute("data-view", s0.toPrecision(6) + "," + s1.toPrecision(6) + "," + rFirst + "," + rLast);
    saveView();
    canvas.setAttribute("data-drawn-ranks", String(drawn));
    canvas.setAttribute("data-visible-ranks", String(rLast - rFirst));
    canvas.setAttribute("data-painted", String(segs));
    document.documentElement.setAttribute("data-timeline", "drawn");
  }

  function zoomTime(f, x) {
    var t = tOf(x === undefined ? LEFT + plotW() / 2 : Math.min(Math.max(x, LEFT), LEFT + plotW()));
    v.t0 = t - (t - v.t0) * f; v.t1 = t + (v.t1 - t) * f;
    clampView(); draw();
  }
  function zoomRanks(f, y) {
    var r = rOf(y === undefined ? lanesTop + lanesH / 2 : y);
    v.r0 = r - (r - v.r0) * f; v.r1 = r + (v.r1 - r) * f;
    clampView(); draw();
  }
  function pan(dx, dy) {
    var dt = dx / plotW() * (v.t1 - v.t0), dr = dy / laneH();
    v.t0 -= dt; v.t1 -= dt; v.r0 -= dr; v.r1 -= dr;
    clampView(); draw();
  }
  function show(t0, t1, r0, r1) {
    v.t0 = t0; v.t1 = t1;
    if (r0 !== undefined) { v.r0 = r0; v.r1 = r1; }
    clampView(); draw();
  }
  function reset() { show(0, span, 0, n); }
  function showSlow(i) {
    var sl = D.slow[i], a = sl.start / D.tick, b = sl.end / D.tick, m = Math.max((b - a) * 2, span * 1e-4);
    marked = i;
    show(a - m, b + m, 0, n);
  }

  function pos(e) {
    var rc = canvas.getBoundingClientRect();
    return { x: e.clientX - rc.left, y: e.clientY - rc.top };
  }
  function where(p) {
    if (p.x >= LEFT && p.x < LEFT + plotW()) {
      if (p.y < RULER) return "ruler";
      if (p.y < RULER + PHASES) return "phases";
      if (p.y < lanesTop - 4) return "slow";
      if (p.y >= lanesTop && p.y < lanesTop + lanesH) return "lanes";
    }
    if (p.x < LEFT && p.y >= lanesTop) return "ranks";
    if (p.x >= LEFT + plotW() + GAP && p.y >= lanesTop) return "profile";
    return "";
  }

  function hit(list, t, minPx) {
    var slack = minPx / plotW() * (v.t1 - v.t0);
    for (var i = 0; i < list.length; i++) {
      if (list[i].start / D.tick - slack <= t && t <= list[i].end / D.tick + slack) return i;
    }
    return -1;
  }

  function describe(p) {
    var zone = where(p), t = tOf(p.x), r = Math.floor(rOf(p.y));
    if (zone === "lanes" && r >= 0 && r < n) {
      var l = lanes[r], i = first(l, t);
      if (i >= l.c.length || l.t[i] > t) return "rank " + r + "\nno call at " + fmt(sec(t));
      var c = l.c[i], st = stateOf(c), kind = D.kinds[c & KIND];
      var what = st === 0 ? "computation" : D.states[st].name + " · " + kind;
      if (c & MERGED) what = "mostly " + what + "\n(spans under " + fmt(D.resolution) + " merged)";
      var cause = r in causeOf ? "\nroot cause of " + (100 * D.causes[causeOf[r]].share).toFixed(0) + "% of the waiting: " + D.causes[causeOf[r]].where : "";
      return "rank " + r + "\n" + what + "\n" + fmt(sec(l.t[i + 1] - l.t[i])) + " from " + fmt(sec(l.t[i])) + cause;
    }
    if (zone === "phases") {
      var k = hit(D.phases, t, 0);
      if (k >= 0) {
        var ph = D.phases[k];
        return "phase " + ph.number + (ph.function ? " (" + ph.function + ")" : "") + "\ninstances " + ph.from + "–" + ph.to +
          "\n" + fmt(ph.end - ph.start) + " from " + fmt(ph.start) + "\n" + ph.slow + " slow instances\nclick to zoom";
      }
    }
    if (zone === "slow") {
      var j = hit(D.slow, t, 3);
      if (j >= 0) {
        var sl = D.slow[j];
        return "slow instance " + sl.position + " of CP" + sl.pattern + " (phase " + sl.phase + ")\n" + fmt(sl.end - sl.start) +
          " instead of " + fmt(sl.median) + " (M = " + sl.z.toFixed(1) + ")\nrank " + sl.rank + (sl.late ? ", " + sl.late : " alone") + "\ninspect: " + sl.affinity + "\nclick to zoom";
      }
    }
    if (zone === "profile" && r >= 0 && r < n) {
      var lines = ["rank " + r];
      D.totals[r].forEach(function (s, k) { if (s > 0) lines.push(D.states[k].name + ": " + fmt(s)); });
      return lines.join("\n");
    }
    return "";
  }

  function showTip(p) {
    var text = describe(p);
    if (!text) { tip.hidden = true; return; }
    tip.textContent = text;
    tip.hidden = false;
    var x = p.x + 14, y = p.y + 14;
    if (x + tip.offsetWidth > W) x = p.x - tip.offsetWidth - 8;
    tip.style.left = x + "px";
    tip.style.top = y + "px";
  }

  canvas.addEventListener("wheel", function (e) {
    // The wheel scrolls the page until the timeline is clicked (or with
    // ctrl held), as maps in web pages do: a reader scrolling past it is
    // not caught by it.
    if (!e.ctrlKey && document.activeElement !== box) return;
    e.preventDefault();
    var p = pos(e), f = Math.exp(e.deltaY * 0.0015);
    if (e.shiftKey || where(p) === "ranks") zoomRanks(f, p.y); else zoomTime(f, p.x);
  }, { passive: false });
  canvas.addEventListener("mousedown", function (e) {
    var p = pos(e), zone = where(p);
    drag = { mode: zone === "ruler" ? "time" : zone === "ranks" ? "ranks" : "pan", x0: p.x, y0: p.y, x: p.x, y: p.y, moved: false };
    box.focus();
  });
  window.addEventListener("mousemove", function (e) {
    var p = pos(e);
    mouse = p;
    if (!drag) { showTip(p); return; }
    if (Math.abs(p.x - drag.x0) + Math.abs(p.y - drag.y0) > 3) drag.moved = true;
    if (drag.mode === "pan") { pan(p.x - drag.x, p.y - drag.y); }
    drag.x = p.x; drag.y = p.y;
    if (drag.mode !== "pan") draw();
    tip.hidden = true;
  });
  window.addEventListener("mouseup", function (e) {
    if (!drag) return;
    var d = drag, p = pos(e);
    drag = null;
    if (d.mode === "time" && Math.abs(p.x - d.x0) > 4) {
      show(tOf(Math.min(p.x, d.x0)), tOf(Math.max(p.x, d.x0)));
    } else if (d.mode === "ranks" && Math.abs(p.y - d.y0) > 4) {
      v.r0 = rOf(Math.min(p.y, d.y0)); v.r1 = rOf(Math.max(p.y, d.y0)); clampView(); draw();
    } else if (!d.moved) {
      click(p);
    } else draw();
  });
  function click(p) {
    var zone = where(p), t = tOf(p.x);
    if (zone === "phases") {
      var k = hit(D.phases, t, 0);
      if (k >= 0) { var ph = D.phases[k], m = (ph.end - ph.start) * 0.02 / D.tick; show(ph.start / D.tick - m, ph.end / D.tick + m); }
    } else if (zone === "slow") {
      var j = hit(D.slow, t, 3);
      if (j >= 0) showSlow(j);
    }
  }
  canvas.addEventListener("mouseleave", function () { tip.hidden = true; });
  canvas.addEventListener("dblclick", reset);
  box.addEventListener("keydown", function (e) {
    var x = mouse ? mouse.x : undefined;
    switch (e.key) {
      case "w": case "W": case "+": zoomTime(0.7, x); break;
      case "s": case "S": case "-": zoomTime(1 / 0.7, x); break;
      case "a": case "A": case "ArrowLeft": pan(plotW() * 0.2, 0); break;
      case "d": case "D": case "ArrowRight": pan(-plotW() * 0.2, 0); break;
      case "ArrowUp": pan(0, lanesH * 0.2); break;
      case "ArrowDown": pan(0, -lanesH * 0.2); break;
      case "0": reset(); break;
      default: return;
    }
    e.preventDefault();
  });
  document.querySelectorAll(".controls button").forEach(function (b) {
    b.addEventListener("click", function () {
      switch (b.getAttribute("data-act")) {
        case "in": zoomTime(0.5); break;
        case "out": zoomTime(2); break;
        case "left": pan(plotW() * 0.3, 0); break;
        case "right": pan(-plotW() * 0.3, 0); break;
        case "reset": marked = -1; reset(); break;
      }
    });
  });
  document.querySelectorAll("a[data-slow]").forEach(function (a) {
    a.addEventListener("click", function () { showSlow(Number(a.getAttribute("data-slow"))); });
  });
  // The view is kept in the address's fragment (#t=START,END&r=FIRST,LAST,
  // seconds and ranks), so that a view can be shared as a link and
  // survives a reload.
  var saving = false;
  function saveView() {
    if (saving || !window.history || !history.replaceState) return;
    var h = "#t=" + sec(v.t0).toPrecision(9) + "," + sec(v.t1).toPrecision(9) + "&r=" + Math.floor(v.r0) + "," + Math.ceil(v.r1);
    try { history.replaceState(null, "", h); } catch (e) { /* a file: page may refuse */ }
  }
  function loadView() {
    var m = /[#&]t=([0-9.e+-]+),([0-9.e+-]+)/.exec(location.hash), q = /[#&]r=(\d+),(\d+)/.exec(location.hash);
    if (m) { v.t0 = Number(m[1]) / D.tick; v.t1 = Number(m[2]) / D.tick; }
    if (q) { v.r0 = Number(q[1]); v.r1 = Number(q[2]); }
    if (m || q) clampView();
  }
  window.addEventListener("resize", resize);
  saving = true;
  loadView();
  resize();
  saving = false;
})();
