/**
 * REPORT.md as HTML: the one HTML the page renders, Markdown by marked, sanitized by DOMPurify. Loaded by
 * detail.js when a report is first shown, not with the page.
 */
import { marked } from '/vendor/marked/lib/marked.esm.js';
import DOMPurify from '/vendor/dompurify/dist/purify.es.mjs';

/**
 * Agents wrote much of REPORT.md: it loads nothing from elsewhere. An image whose address is not relative
 * to the page (a scheme, `//host`, a backslash form) loses its address, its alt text stays: it would tell a
 * remote server the report was opened, and its query could carry what the page shows. No media, forms or
 * style attributes either (the page's Content-Security-Policy refuses them too).
 */
// eslint-disable-next-line no-control-regex
const RELATIVE = /^(?![a-z][a-z0-9+.-]*:|[\\/]{2}|\/\\)[^\s\x00-\x1f\x7f]*$/i;
DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.nodeName !== 'IMG' || RELATIVE.test(node.getAttribute('src') ?? '')) return;
  node.removeAttribute('src');
  node.setAttribute('data-remote-image', 'dropped');
});
const PURIFY = {
  FORBID_TAGS: [
    'audio',
    'video',
    'source',
    'track',
    'picture',
    'form',
    'input',
    'style',
    'link',
    'meta',
    'base',
  ],
  FORBID_ATTR: ['srcset', 'poster', 'background', 'style', 'action', 'formaction', 'ping'],
};

/** REPORT.md as sanitized HTML, remote images dropped. */
export function reportHtml(markdown) {
  return DOMPurify.sanitize(marked.parse(markdown), PURIFY);
}
