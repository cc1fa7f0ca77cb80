/**
 * Which IP addresses are this machine or its private network: loopback, private (RFC 1918, unique local),
 * link-local (with the cloud metadata service at 169.254.169.254), carrier-grade NAT, unspecified and
 * multicast. An allowed host name that resolves to one of them is refused by the network bridge, so a DNS
 * answer cannot turn `api.example.com:443` into a route to a local service. Pure.
 */
const V4_INTERNAL: readonly [string, number][] = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
];

const v4Number = (address: string) => address.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);

function v4Internal(address: string): boolean {
  const n = v4Number(address);
  return V4_INTERNAL.some(([base, bits]) => {
    const size = 2 ** (32 - bits);
    return Math.floor(n / size) === Math.floor(v4Number(base) / size);
  });
}

/** The 8 groups of an IPv6 address as numbers (`::` expanded, a dotted IPv4 tail split in two). */
function v6Groups(address: string): number[] {
  let text = address.toLowerCase().split('%')[0]!;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const n = v4Number(dotted[1]!);
    text = `${text.slice(0, -dotted[1]!.length)}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const parse = (part: string | undefined) => (part ? part.split(':').map((g) => parseInt(g, 16)) : []);
  const left = parse(head);
  const right = parse(tail);
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}

function v6Internal(address: string): boolean {
  const g = v6Groups(address);
  if (g.slice(0, 5).every((x) => x === 0) && (g[5] === 0xffff || g[5] === 0)) {
    // IPv4-mapped (::ffff:a.b.c.d) and -compatible: judged as the IPv4 address; :: and ::1 included.
    if (g[5] === 0 && g[6] === 0 && (g[7] === 0 || g[7] === 1)) return true;
    return v4Internal(`${g[6]! >> 8}.${g[6]! & 255}.${g[7]! >> 8}.${g[7]! & 255}`);
  }
  const first = g[0]!;
  return (
    (first & 0xfe00) === 0xfc00 || // unique local fc00::/7 (AWS metadata fd00:ec2::254 among them)
    (first & 0xffc0) === 0xfe80 || // link-local fe80::/10
    (first & 0xff00) === 0xff00 || // multicast
    (first === 0x64 && g[1] === 0xff9b) // NAT64 of any IPv4 address: not checkable here
  );
}

/** Whether `address` (IPv4 or IPv6) is loopback, private, link-local or otherwise not the internet. */
export function isInternalAddress(address: string): boolean {
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(address)) return v4Internal(address);
  if (/^[0-9a-f:.]+(%.*)?$/i.test(address) && address.includes(':')) return v6Internal(address);
  return true; // not an address: never connectable
}
