/**
 * Preact + htm, loaded as ES modules from the board server's /vendor allow-list (VENDOR.md): no build step.
 * htm turns every interpolated string into a text node, so agent-written text is never parsed as HTML.
 */
import { Component, createRef, h, render } from '/vendor/preact/dist/preact.mjs';
import htm from '/vendor/htm/dist/htm.mjs';

export const html = htm.bind(h);
export { Component, createRef, render };
