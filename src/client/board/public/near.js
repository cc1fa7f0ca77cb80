/**
 * Building only what is near the viewport: one IntersectionObserver for the page tells a component when its
 * element comes within a screen's height of the viewport (lanes' cards, the agent runs chart).
 */
import { Component, createRef, html } from './html.js';

let observer = null;
const callbacks = new Map();

export function watchNear(el, callback) {
  observer ??= new globalThis.IntersectionObserver(
    (entries) => entries.forEach((e) => e.isIntersecting && callbacks.get(e.target)?.()),
    { rootMargin: '100% 0px' },
  );
  callbacks.set(el, callback);
  observer.observe(el);
}

export function unwatchNear(el) {
  callbacks.delete(el);
  observer?.unobserve(el);
}

/** Its children once its place came near the viewport (then for good); before, an empty block `class`. */
export class WhenNear extends Component {
  constructor() {
    super();
    this.place = createRef();
    this.state = { near: false };
  }

  componentDidMount() {
    watchNear(this.place.current, () => {
      unwatchNear(this.place.current);
      this.setState({ near: true });
    });
  }

  componentWillUnmount() {
    if (this.place.current) unwatchNear(this.place.current);
  }

  render({ children, placeholder }, { near }) {
    return near ? children : html`<div ref=${this.place} class=${placeholder}></div>`;
  }
}
