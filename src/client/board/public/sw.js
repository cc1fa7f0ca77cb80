/* global self, URL */
/**
 * The board's service worker (notify.js): it only shows the board's notifications and handles their
 * click, by focusing a board tab and telling it which card to open (or opening the board on that saga). It
 * fetches nothing and caches nothing.
 */
self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));

self.addEventListener('notificationclick', (event) => {
  event.notification.close();
  const { saga, interaction } = event.notification.data || {};
  if (typeof saga !== 'string' || typeof interaction !== 'string') return;
  event.waitUntil(
    (async () => {
      const windows = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
      const board = windows.find((w) => new URL(w.url).origin === self.location.origin);
      if (board) {
        await board.focus();
        board.postMessage({ type: 'saga-board-open-card', saga, interaction });
        return;
      }
      const card = encodeURIComponent(interaction);
      await self.clients.openWindow(`/?card=${card}#/saga/${encodeURIComponent(saga)}`);
    })(),
  );
});
