/** The saga board's gate: the bearer token, the Host names it answers to and the Origin check for answers. */
import {
  boardHosts,
  boardOrigins,
  hostAllowed,
  newBoardToken,
  originAllowed,
  tokenMatches,
} from '../../../../src/client/board/auth';

describe('board token', () => {
  const token = 'a-long-enough-board-token';

  it('accepts exactly the token as a bearer credential', () => {
    expect(tokenMatches(token, `Bearer ${token}`)).toBe(true);
    expect(tokenMatches(token, `bearer ${token}`)).toBe(true);
  });

  it('refuses a missing, empty, wrong, prefixed or differently long token', () => {
    for (const header of [
      undefined,
      null,
      '',
      'Bearer ',
      token,
      `Basic ${token}`,
      `Bearer ${token}x`,
      'Bearer a',
    ])
      expect(tokenMatches(token, header)).toBe(false);
    expect(tokenMatches('', 'Bearer ')).toBe(false);
  });

  it('makes random tokens of a good length', () => {
    const a = newBoardToken();
    expect(a.length).toBeGreaterThanOrEqual(32);
    expect(a).not.toBe(newBoardToken());
  });
});

describe('board hosts and origins', () => {
  const hosts = boardHosts('127.0.0.1', 8234);
  const origins = boardOrigins(hosts);

  it('answers to the loopback names on its port only', () => {
    expect(hosts).toEqual(['127.0.0.1:8234', 'localhost:8234', '[::1]:8234']);
    expect(hostAllowed(hosts, 'localhost:8234')).toBe(true);
    expect(hostAllowed(hosts, 'LOCALHOST:8234')).toBe(true);
    for (const host of ['evil.example:8234', '127.0.0.1:9999', '127.0.0.1', undefined, ''])
      expect(hostAllowed(hosts, host)).toBe(false);
  });

  it('adds the bound address when it is not a loopback one', () => {
    expect(boardHosts('192.168.1.5', 8080)).toEqual(['192.168.1.5:8080']);
    expect(boardHosts('192.168.1.5', 80)).toEqual(['192.168.1.5:80', '192.168.1.5']);
    const lan = { eth0: [{ family: 'IPv4', address: '10.0.0.7' }] } as unknown as Parameters<
      typeof boardHosts
    >[2];
    expect(boardHosts('0.0.0.0', 8080, lan)).toEqual([
      '127.0.0.1:8080',
      'localhost:8080',
      '[::1]:8080',
      '10.0.0.7:8080',
    ]);
  });

  it("accepts the board's own origin, and requests without one (the token still guards them)", () => {
    expect(originAllowed(origins, 'http://127.0.0.1:8234')).toBe(true);
    expect(originAllowed(origins, 'http://localhost:8234', 'same-origin')).toBe(true);
    expect(originAllowed(origins, undefined)).toBe(true);
  });

  it('refuses other sites, other ports, https look-alikes, opaque origins and cross-site fetches', () => {
    for (const origin of ['http://evil.example', 'http://127.0.0.1:9999', 'https://127.0.0.1:8234', 'null'])
      expect(originAllowed(origins, origin)).toBe(false);
    expect(originAllowed(origins, undefined, 'cross-site')).toBe(false);
    expect(originAllowed(origins, 'http://127.0.0.1:8234', 'same-site')).toBe(false);
  });
});
