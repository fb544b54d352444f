// The Agon board as a drawing component, shared by the main board and every
// small board (rules diagrams, lessons). It only draws: which moves are legal
// and what a position means are the server's business.
//
// API (global `AgonBoard`):
//   const board = AgonBoard.create(svg, geometry, { onCell(name, event) })
//     svg      an <svg> element; the board fills it (its viewBox is set here).
//     geometry what /api/geometry answers: { cells: [{name, file, rank, ring}], throne }.
//     onCell   optional; called on pointerdown over a cell with its name.
//   board.draw({ cells, orientation, marks, arrows, fen })
//     cells       { "f1": "Q", "e7": "G*", ... }: FEN letters per cell, `*` for
//                 captured, empty or missing for an empty cell.
//     orientation "white" (White at the bottom, the default) or "black".
//     marks       { cellName: ["last", "dest", ...] }: CSS classes put on the
//                 cell's <g>; every other cell loses the classes it had.
//     arrows      [{ mv: "f1f2", cls: "best", width: 2.2 }]: drawn over the pieces.
//     fen         optional; written to the svg's data-fen for scripts and tests.
//     Only what is given changes: draw({ marks }) keeps the pieces.
//   board.animate(mv, letter)   slides `letter` from the move's first cell to its second
//                               (not when the system asks for reduced motion).
//   board.cellAt(clientX, clientY) -> the cell name under a screen point, or null.
//   board.point(event)          -> the event's position in board coordinates.
//   board.floating(letter, x, y) draws a dragged piece at board coordinates
//                               (letter null or "" removes it).
//   board.cellNode(name)        -> the cell's <g>, or null.
//   board.orientation()         -> "white" or "black".
// Contract for scripts: every cell is a <g data-cell="f1" data-piece="Q">;
// the svg carries data-orientation and, when given, data-fen.
"use strict";

const AgonBoard = (() => {
  const SVG = "http://www.w3.org/2000/svg";
  const SIZE = 9.6; // centre to corner of a cell
  const ROW = Math.sqrt(3) * SIZE;
  const ANIMATION_MS = 160;
  const REDUCED_MOTION = window.matchMedia ? window.matchMedia("(prefers-reduced-motion: reduce)") : null;

  function el(name, attrs = {}, parent = null) {
    const node = document.createElementNS(SVG, name);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
    if (parent) parent.appendChild(node);
    return node;
  }

  function hexPoints(cx, cy, size) {
    const pts = [];
    for (let i = 0; i < 6; i++) {
      const a = (Math.PI / 3) * i;
      pts.push((cx + size * Math.cos(a)).toFixed(2) + "," + (cy + size * Math.sin(a)).toFixed(2));
    }
    return pts.join(" ");
  }

  function splitMove(mv) {
    const m = /^([a-k]\d{1,2})([a-k]\d{1,2})$/.exec(mv || "");
    return m ? [m[1], m[2]] : null;
  }

  function drawPiece(parent, letter, x, y) {
    parent.textContent = "";
    if (!letter) return null;
    const white = letter[0] === letter[0].toUpperCase();
    const queen = letter[0].toLowerCase() === "q";
    const captured = letter.endsWith("*");
    const g = el("g", { class: "piece " + (white ? "white" : "black") + (captured ? " captured" : "") }, parent);
    el("circle", { class: "body", cx: x, cy: y, r: SIZE * (queen ? 0.7 : 0.58) }, g);
    if (queen) {
      const s = SIZE * 0.42;
      const d = `M ${x - s} ${y + s * 0.5} L ${x - s} ${y - s * 0.5} L ${x - s * 0.5} ${y} L ${x} ${y - s * 0.8} L ${x + s * 0.5} ${y} L ${x + s} ${y - s * 0.5} L ${x + s} ${y + s * 0.5} Z`;
      el("path", { class: "crown", d }, g);
    }
    if (captured) {
      const c = SIZE * 0.5;
      el("path", { class: "cross", d: `M ${x - c} ${y - c} L ${x + c} ${y + c} M ${x + c} ${y - c} L ${x - c} ${y + c}` }, g);
    }
    return g;
  }

  function create(svg, geometry, handlers = {}) {
    let orientation = "white";
    let cells = {};
    let marks = {};
    let arrows = [];
    let fen = null;
    const nodes = new Map();
    let layers = null;

    function centre(cell) {
      const x = (cell.file - 5) * 1.5 * SIZE;
      const y = (cell.file / 2 - cell.rank + 2.5) * ROW;
      return orientation === "black" ? [-x, -y] : [x, y];
    }

    function build() {
      svg.textContent = "";
      svg.setAttribute("viewBox", "-90 -96 180 192");
      svg.dataset.orientation = orientation;
      const defs = el("defs", {}, svg);
      for (const kind of ["best", "hint"]) {
        const marker = el("marker", { id: svg.id + "-head-" + kind, class: "arrowhead " + kind, viewBox: "0 0 10 10", refX: "5", refY: "5", markerWidth: "3", markerHeight: "3", orient: "auto-start-reverse" }, defs);
        el("path", { d: "M 0 0 L 10 5 L 0 10 z" }, marker);
      }
      const cellLayer = el("g", { class: "cells" }, svg);
      nodes.clear();
      for (const cell of geometry.cells) {
        const [x, y] = centre(cell);
        const g = el("g", { class: "cell ring-" + cell.ring, "data-cell": cell.name, "data-piece": "" }, cellLayer);
        el("polygon", { points: hexPoints(x, y, SIZE - 0.35) }, g);
        if (cell.name === geometry.throne) {
          el("polygon", { class: "throne-mark", points: hexPoints(x, y, SIZE * 0.72) }, g);
        }
        el("circle", { class: "dest-dot", cx: x, cy: y, r: SIZE * 0.28 }, g);
        const slot = el("g", { class: "slot" }, g);
        nodes.set(cell.name, { g, slot, x, y, drawn: null, classes: [] });
      }
      // Coordinates above the pieces, at the lower edge of each cell.
      const labels = el("g", { class: "labels" }, svg);
      for (const cell of geometry.cells) {
        const node = nodes.get(cell.name);
        const label = el("text", { class: "label", x: node.x, y: node.y + SIZE * 0.8, "text-anchor": "middle" }, labels);
        label.textContent = cell.name;
      }
      layers = {
        arrows: el("g", { class: "arrows" }, svg),
        moving: el("g", { class: "moving" }, svg),
        floating: el("g", { class: "floating" }, svg),
      };
    }

    function drawPieces() {
      for (const [name, node] of nodes) {
        const piece = cells[name] || "";
        if (node.drawn !== piece) {
          node.g.setAttribute("data-piece", piece);
          drawPiece(node.slot, piece, node.x, node.y);
          node.drawn = piece;
        }
      }
    }

    function drawMarks() {
      for (const [name, node] of nodes) {
        const wanted = marks[name] || [];
        for (const cls of node.classes) if (!wanted.includes(cls)) node.g.classList.remove(cls);
        for (const cls of wanted) node.g.classList.add(cls);
        node.classes = wanted.slice();
      }
    }

    function drawArrows() {
      const layer = layers.arrows;
      layer.textContent = "";
      for (const a of arrows) {
        const ends = splitMove(a.mv);
        if (!ends || !nodes.has(ends[0]) || !nodes.has(ends[1])) continue;
        const from = nodes.get(ends[0]);
        const to = nodes.get(ends[1]);
        const kind = a.cls === "hint" ? "hint" : "best";
        const line = el("line", { class: "arrow " + (a.cls || "best"), x1: from.x, y1: from.y, x2: to.x, y2: to.y, "marker-end": `url(#${svg.id}-head-${kind})` }, layer);
        line.dataset.mv = a.mv;
        if (a.width) line.style.strokeWidth = String(a.width);
        if (a.opacity) line.style.opacity = String(a.opacity);
      }
    }

    function draw(view) {
      if (view.orientation && view.orientation !== orientation) {
        orientation = view.orientation;
        build();
      }
      if (view.cells) cells = view.cells;
      if (view.marks) marks = view.marks;
      if (view.arrows) arrows = view.arrows;
      if (view.fen !== undefined) fen = view.fen;
      if (fen !== null) svg.dataset.fen = fen;
      drawPieces();
      drawMarks();
      drawArrows();
    }

    function animate(mv, letter) {
      const ends = splitMove(mv);
      if (!ends || !letter || !nodes.has(ends[0]) || !nodes.has(ends[1])) return;
      if (REDUCED_MOTION && REDUCED_MOTION.matches) return;
      const from = nodes.get(ends[0]);
      const to = nodes.get(ends[1]);
      const target = to.slot.firstChild;
      const moving = drawPiece(layers.moving, letter, 0, 0);
      if (target) target.style.visibility = "hidden";
      const started = performance.now();
      const step = (now) => {
        const k = Math.min(1, (now - started) / ANIMATION_MS);
        const eased = k * (2 - k);
        const x = (to.x - from.x) * eased;
        const y = (to.y - from.y) * eased;
        moving.setAttribute("transform", `translate(${from.x + x} ${from.y + y})`);
        if (k < 1) {
          requestAnimationFrame(step);
        } else {
          layers.moving.textContent = "";
          if (target) target.style.visibility = "";
        }
      };
      moving.setAttribute("transform", `translate(${from.x} ${from.y})`);
      requestAnimationFrame(step);
    }

    function cellAt(clientX, clientY) {
      const target = document.elementFromPoint(clientX, clientY);
      const g = target && target.closest("[data-cell]");
      return g && svg.contains(g) ? g.getAttribute("data-cell") : null;
    }

    function point(event) {
      const p = svg.createSVGPoint();
      p.x = event.clientX;
      p.y = event.clientY;
      return p.matrixTransform(svg.getScreenCTM().inverse());
    }

    function floating(letter, x, y) {
      drawPiece(layers.floating, letter, x, y);
    }

    svg.addEventListener("pointerdown", (event) => {
      const g = event.target.closest("[data-cell]");
      if (g && handlers.onCell) handlers.onCell(g.getAttribute("data-cell"), event);
    });
    build();

    return {
      draw,
      animate,
      cellAt,
      point,
      floating,
      orientation: () => orientation,
      cellNode: (name) => (nodes.has(name) ? nodes.get(name).g : null),
    };
  }

  return { create, splitMove };
})();
