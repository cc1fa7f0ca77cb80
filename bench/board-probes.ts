/**
 * The page code bench/board.ts runs in the board's tabs (strings: the bench's tsconfig has no DOM types): the
 * first-load probe, the scroll that builds every card, and the recorder of cards' state changes.
 */

/** A card's width and gap (saga.css `.task`, `.lane .cards`): how many cards a lane's width shows. */
export const CARD_PX = 228;

/**
 * In every page, before its own scripts (the bench's tsconfig has no DOM types: page code is a string).
 * `__cardsMs`: navigation start → every lane in the DOM and, in each lane in view, the cards the viewport
 * shows of it (`__cardsBuilt`: the cards in the DOM then); `__usableMs`: → the frame that shows them (its
 * style, layout and paint run before the task after requestAnimationFrame). The page's own marks:
 * `saga-board:modules` (its modules loaded), `saga-board:first-status` (the saga's first view arrived).
 */
export const usableProbe = (milestones: number): string => `(() => {
  const lanesReady = () => {
    const lanes = document.querySelectorAll('section.lane');
    if (lanes.length < ${milestones}) return false;
    for (const lane of lanes) {
      const r = lane.getBoundingClientRect();
      if (r.bottom < 0 || r.top > innerHeight) continue;
      const box = lane.querySelector('.cards');
      const fit = Math.min(Number(lane.dataset.tasks), Math.ceil(box.clientWidth / ${CARD_PX}));
      if (lane.querySelectorAll('[data-task]').length < fit) return false;
    }
    return true;
  };
  let seen = false;
  const observer = new MutationObserver(() => {
    if (seen || !lanesReady()) return;
    seen = true;
    observer.disconnect();
    window.__cardsMs = performance.now();
    window.__cardsBuilt = document.querySelectorAll('[data-task]').length;
    requestAnimationFrame(() => setTimeout(() => { window.__usableMs = performance.now(); }, 0));
  });
  observer.observe(document, { childList: true, subtree: true, attributes: true, attributeFilter: ['data-built'] });
})();`;

/**
 * Scrolls through the whole saga, each lane to its right end, until every lane has built every card: the
 * worst case for an update (all 1,000 cards in the page), and the change recorder then sees every task.
 */
export const BUILD_ALL = `(async () => {
  const frame = () => new Promise((r) => requestAnimationFrame(() => r()));
  for (let round = 0; round < 200; round++) {
    const lanes = [...document.querySelectorAll('section.lane')];
    const short = lanes.filter((l) => l.dataset.built !== l.dataset.tasks);
    if (!short.length) break;
    for (const lane of short) {
      lane.scrollIntoView();
      const box = lane.querySelector('.cards');
      box.scrollLeft = box.scrollWidth;
      box.dispatchEvent(new Event('scroll'));
    }
    await frame();
  }
  window.scrollTo(0, 0);
  return document.querySelectorAll('[data-task]').length;
})()`;

/** On the latency page: every change of a card's `data-status`, as [ref, from, to, wall-clock ms]. */
export const CHANGE_RECORDER = `(() => {
  window.__changes = [];
  new MutationObserver((records) => {
    const at = Date.now();
    for (const r of records) {
      const to = r.target.getAttribute('data-status');
      if (r.oldValue !== null && to !== r.oldValue)
        window.__changes.push([r.target.getAttribute('data-task'), r.oldValue, to, at]);
    }
  }).observe(document, { attributes: true, attributeFilter: ['data-status'], attributeOldValue: true, subtree: true });
})();`;
