// The script of report.html, inlined into the page: it needs nothing from outside.
//
// It drives the review views of pytest_tlgraph/review/html.py:
// * per failure, tabs between side by side, a slider (expected left of the split line,
//   actual right of it, both at the top-left of their union canvas) and an onion skin
//   (actual over expected, its opacity set by a range input);
// * the structural diff in a pan and zoom viewer that starts at 100 %; a story line's
//   link centres the viewer on the node it names;
// * keys: j/n/ArrowDown next failure, k/p/ArrowUp previous, 1/2/3 the current
//   failure's view, f/0/w fit, 100 % and the whole graph in its diff viewer, ? the
//   help overlay (never while typing in an input).
//
// An image used twice is inlined once: a second <img> names the first by data-same
// and gets its src here, when its view is first shown.
(() => {
  'use strict';
  const $$ = (sel, root) => [...(root || document).querySelectorAll(sel)];
  const failures = $$('section.failure');
  const where = document.querySelector('.pager .where');
  const help = document.getElementById('help');
  let current = -1;

  // An <img data-same="ID"> shows the image inlined once, in <img id="ID">.
  function fill(root) {
    for (const img of $$('img[data-same]', root)) {
      if (!img.getAttribute('src') && !img.parentElement.closest('[hidden]')) {
        const source = document.getElementById(img.dataset.same);
        if (source) img.src = source.src;
      }
    }
  }

  // ---- the comparison views: side by side, slider, onion skin --------------------
  function setRange(stage, input) {
    const value = Number(input.value);
    const out = input.parentElement.querySelector('output');
    if (out) out.textContent = value + '%';
    if (stage.classList.contains('swipe')) stage.style.setProperty('--split', value + '%');
    else stage.querySelector('.over').style.opacity = String(value / 100);
  }

  // Both pictures of a stage at one scale: 1, or less where the canvas is wider than
  // the page.
  function fitStage(stage) {
    const room = stage.parentElement.clientWidth;
    if (!room) return;
    const k = Math.min(1, room / Number(stage.dataset.w));
    stage.style.setProperty('--k', String(k));
  }
  // Side by side, the pictures share one scale too: the widest fits its column.
  function fitSide(pane) {
    const frames = $$('.frame', pane);
    const room = Math.min(...frames.map((f) => f.clientWidth));
    const widest = Math.max(...$$('img', pane).map((i) => Number(i.dataset.w) || 0));
    if (room > 0 && widest > 0) pane.style.setProperty('--k', String(Math.min(1, room / widest)));
  }
  function fitPane(pane) {
    if (pane.classList.contains('side')) fitSide(pane);
    else $$('.stage', pane).forEach(fitStage);
  }
  addEventListener('resize', () => $$('.view:not([hidden])').forEach(fitPane));

  function showView(compare, view) {
    if (!compare) return;
    for (const button of $$('.tabs button', compare)) {
      button.setAttribute('aria-pressed', String(button.dataset.view === view));
    }
    for (const pane of $$('.view', compare)) {
      pane.hidden = !pane.classList.contains(view);
      if (!pane.hidden) {
        fill(pane);
        fitPane(pane);
      }
    }
    compare.dataset.view = view;
  }

  for (const compare of $$('.compare')) {
    for (const button of $$('.tabs button', compare)) {
      button.addEventListener('click', () => showView(compare, button.dataset.view));
    }
    for (const stage of $$('.stage', compare)) {
      const input = stage.closest('.view').querySelector('input[type=range]');
      input.addEventListener('input', () => setRange(stage, input));
      setRange(stage, input);
      if (!stage.classList.contains('swipe')) continue;
      let dragging = false;  // on the slider, a drag on the picture moves the split too
      const follow = (event) => {
        const box = stage.getBoundingClientRect();
        const share = Math.min(1, Math.max(0, (event.clientX - box.left) / box.width));
        input.value = String(Math.round(share * 100));
        setRange(stage, input);
      };
      stage.addEventListener('pointerdown', (event) => {
        event.preventDefault();
        dragging = true;
        stage.setPointerCapture(event.pointerId);
        follow(event);
      });
      stage.addEventListener('pointermove', (event) => { if (dragging) follow(event); });
      stage.addEventListener('pointerup', () => { dragging = false; });
      stage.addEventListener('pointercancel', () => { dragging = false; });
    }
    showView(compare, compare.dataset.view || 'side');
  }

  // A click on a side-by-side image shows it at its natural size, and back.
  for (const img of $$('figure .frame img')) {
    img.addEventListener('click', () => img.classList.toggle('full'));
  }

  // ---- the diff viewer: pan and zoom, starting at 100 % ------------------------
  const MIN = 0.05, MAX = 8, STEP = 1.25;

  function viewer(box) {
    const port = box.querySelector('.port');
    const images = $$('img', port);
    const readout = box.querySelector('.zoom');
    const whole = box.querySelector('button[data-act="whole"]');
    const state = { s: 1, x: 0, y: 0, img: images[0] };
    const size = () => ({ w: Number(state.img.dataset.w) || state.img.naturalWidth || 1,
                          h: Number(state.img.dataset.h) || state.img.naturalHeight || 1 });

    function clamp() {
      const { w, h } = size();
      const keep = 48;  // never pan the drawing out of sight
      const pw = port.clientWidth, ph = port.clientHeight;
      state.x = Math.min(pw - keep, Math.max(keep - w * state.s, state.x));
      state.y = Math.min(ph - keep, Math.max(keep - h * state.s, state.y));
    }
    function apply() {
      clamp();
      state.img.style.transform =
        `translate(${state.x}px, ${state.y}px) scale(${state.s})`;
      readout.textContent = Math.round(state.s * 100) + '%';
      box.dataset.scale = String(state.s);
    }
    function zoomAt(factor, px, py) {
      const s = Math.min(MAX, Math.max(MIN, state.s * factor));
      state.x = px - (px - state.x) * (s / state.s);
      state.y = py - (py - state.y) * (s / state.s);
      state.s = s;
      apply();
    }
    function place(s) {  // at scale s: centred across (the title is), from the top down
      const { w, h } = size();
      state.s = s;
      state.x = (port.clientWidth - w * s) / 2;
      state.y = Math.max(0, (port.clientHeight - h * s) / 2);
      apply();
    }
    const one = () => place(1);
    const fit = () => {
      const { w, h } = size();
      place(Math.min(1, port.clientWidth / w, port.clientHeight / h));
    };
    function show(img) {
      for (const other of images) other.hidden = other !== img;
      state.img = img;
      fill(port);
      const { h } = size();
      port.style.height = Math.max(120, Math.min(h + 2, innerHeight * 0.75)) + 'px';
      if (whole) whole.setAttribute('aria-pressed', String(img !== images[0]));
      one();
    }
    const centre = () => [port.clientWidth / 2, port.clientHeight / 2];
    // A story line's node: the drawing at 100 %, the node in the middle, outlined.
    const mark = document.createElement('div');
    mark.className = 'mark';
    mark.hidden = true;
    port.appendChild(mark);
    function focus(x, y, w, h) {
      if (state.img !== images[0]) show(images[0]);
      state.s = 1;
      state.x = port.clientWidth / 2 - x;
      state.y = port.clientHeight / 2 - y;
      apply();
      Object.assign(mark.style, {
        left: (state.x + x - w / 2 - 6) + 'px', top: (state.y + y - h / 2 - 6) + 'px',
        width: (w + 12) + 'px', height: (h + 12) + 'px',
      });
      mark.hidden = false;
      mark.classList.remove('flash');
      void mark.offsetWidth;  // restart the animation
      mark.classList.add('flash');
    }
    port.addEventListener('pointerdown', () => { mark.hidden = true; });
    port.addEventListener('wheel', () => { mark.hidden = true; }, { passive: true });
    const act = {
      in: () => zoomAt(STEP, ...centre()),
      out: () => zoomAt(1 / STEP, ...centre()),
      fit, one, focus,
      whole: () => show(state.img === images[0] ? images[1] : images[0]),
    };
    for (const button of $$('button[data-act]', box)) {
      button.addEventListener('click', () => act[button.dataset.act]());
    }
    port.addEventListener('wheel', (event) => {
      event.preventDefault();
      const r = port.getBoundingClientRect();
      const unit = event.deltaMode === 1 ? 16 : event.deltaMode === 2 ? 400 : 1;
      const factor = Math.exp(-event.deltaY * unit * 0.0015);
      zoomAt(factor, event.clientX - r.left, event.clientY - r.top);
    }, { passive: false });
    let drag = null;
    port.addEventListener('pointerdown', (event) => {
      if (event.button !== 0) return;
      event.preventDefault();
      drag = { x: event.clientX - state.x, y: event.clientY - state.y };
      port.setPointerCapture(event.pointerId);
      port.classList.add('dragging');
    });
    port.addEventListener('pointermove', (event) => {
      if (!drag) return;
      state.x = event.clientX - drag.x;
      state.y = event.clientY - drag.y;
      apply();
    });
    const stop = () => { drag = null; port.classList.remove('dragging'); };
    port.addEventListener('pointerup', stop);
    port.addEventListener('pointercancel', stop);
    port.addEventListener('dblclick', (event) => {
      const r = port.getBoundingClientRect();
      zoomAt(2, event.clientX - r.left, event.clientY - r.top);
    });
    show(images[0]);
    box.viewer = act;
  }
  $$('.viewer').forEach(viewer);

  // A story line shows its node in the section's drawing.
  for (const link of $$('ol.story a.place')) {
    link.addEventListener('click', (event) => {
      event.preventDefault();
      const box = link.closest('section.failure').querySelector('.viewer');
      if (!box || !box.viewer) return;
      box.scrollIntoView({ block: 'nearest' });
      const d = link.dataset;
      box.viewer.focus(Number(d.x), Number(d.y), Number(d.w), Number(d.h));
    });
  }

  // ---- moving between failures -------------------------------------------------
  function select(index, scroll) {
    if (!failures.length) return;
    index = Math.max(0, Math.min(failures.length - 1, index));
    if (current >= 0) failures[current].classList.remove('current');
    current = index;
    const section = failures[current];
    section.classList.add('current');
    if (where) where.textContent = `${current + 1} / ${failures.length}`;
    if (scroll) {
      section.scrollIntoView({ block: 'start' });
      history.replaceState(null, '', '#' + section.id);
    }
  }
  function onScreen(section) {
    const r = section.getBoundingClientRect();
    return r.bottom > 0 && r.top < innerHeight;
  }
  function step(delta) {
    // Scrolled away from the current failure: start from the one at the top instead.
    if (current >= 0 && !onScreen(failures[current])) {
      const shown = failures.findIndex((s) => s.getBoundingClientRect().bottom > 40);
      if (shown >= 0) {
        select(shown, false);
        if (delta > 0 && failures[shown].getBoundingClientRect().top > 0) delta = 0;
      }
    }
    select(current + delta, true);
  }
  for (const section of failures) {
    section.addEventListener('pointerdown', () => select(failures.indexOf(section), false));
  }
  for (const link of $$('nav a[href^="#f"]')) {
    link.addEventListener('click', () => {
      const target = document.getElementById(link.hash.slice(1));
      if (target) select(failures.indexOf(target), false);
    });
  }
  // Scrolled away from the current failure: the one at the top becomes current.
  let pending = false;
  addEventListener('scroll', () => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      if (current >= 0 && !onScreen(failures[current])) {
        const shown = failures.findIndex((s) => s.getBoundingClientRect().bottom > 40);
        if (shown >= 0) select(shown, false);
      }
    });
  }, { passive: true });
  for (const button of $$('.pager button[data-step]')) {
    button.addEventListener('click', () => step(Number(button.dataset.step)));
  }

  function toggleHelp(open) {
    help.hidden = open === undefined ? !help.hidden : !open;
  }
  document.querySelector('.pager button[data-help]').addEventListener(
    'click', () => toggleHelp());
  help.addEventListener('click', (event) => { if (event.target === help) toggleHelp(false); });

  const VIEWS = { '1': 'side', '2': 'slider', '3': 'onion' };
  const ACTS = { f: 'fit', '0': 'one', w: 'whole', '+': 'in', '=': 'in', '-': 'out' };
  function typing(target) {
    return target instanceof HTMLElement && (target.isContentEditable ||
      ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName));
  }
  document.addEventListener('keydown', (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) return;
    const key = event.key;
    const idle = event.target === document.body || event.target === document.documentElement
      || (event.target instanceof HTMLElement && event.target.tagName === 'BUTTON');
    if (key === 'Escape' && !help.hidden) { toggleHelp(false); event.preventDefault(); return; }
    if (key === '?') { toggleHelp(); event.preventDefault(); return; }
    if (key === 'j' || key === 'n' || (key === 'ArrowDown' && idle)) step(1);
    else if (key === 'k' || key === 'p' || (key === 'ArrowUp' && idle)) step(-1);
    else if (key in VIEWS || key in ACTS) {
      if (current < 0) select(0, false);
      const section = failures[current];
      if (!section) return;
      if (key in VIEWS) {
        const compare = section.querySelector('.compare');
        if (!compare || !compare.querySelector(`.view.${VIEWS[key]}`)) return;
        showView(compare, VIEWS[key]);
      } else {
        const box = section.querySelector('.viewer');
        if (!box || !box.viewer) return;
        if (ACTS[key] === 'whole' && !box.querySelector('button[data-act="whole"]')) return;
        box.viewer[ACTS[key]]();
      }
    } else return;
    event.preventDefault();
  });

  // Copy a failure's tlgraph accept command (a selected text where no clipboard is).
  for (const button of $$('.accept button[data-copy]')) {
    button.addEventListener('click', () => {
      const text = button.dataset.copy;
      const said = (word) => { button.textContent = word;
        setTimeout(() => { button.textContent = 'copy'; }, 1500); };
      const select = () => { const range = document.createRange();
        range.selectNodeContents(button.previousElementSibling);
        const chosen = getSelection(); chosen.removeAllRanges(); chosen.addRange(range);
        said(document.execCommand && document.execCommand('copy') ? 'copied' : 'selected'); };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(text).then(() => said('copied'), select);
      } else select();
    });
  }

  fill(document);  // the views not shown yet fill theirs when first shown
  const start = failures.findIndex((s) => '#' + s.id === location.hash);
  select(start >= 0 ? start : 0, false);
})();
