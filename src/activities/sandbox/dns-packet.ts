/**
 * Just enough of the DNS wire format for the sandbox's name catcher: the name a query asks for, and the
 * "no such name" answer it gets (names the sandbox may reach are in its hosts file and never asked). Pure.
 */

/** The first question's name of a DNS query (`api.example.com`), or null when the packet is not one. */
export function dnsQuestionName(packet: Buffer): string | null {
  if (packet.length < 17 || packet.readUInt16BE(4) < 1 || (packet[2]! & 0x80) !== 0) return null;
  const labels: string[] = [];
  let at = 12;
  while (at < packet.length) {
    const length = packet[at]!;
    if (length === 0) return labels.length > 0 && at + 5 <= packet.length ? labels.join('.') : null;
    // Compression pointers and over-long labels have no place in a query's question.
    if (length > 63 || at + 1 + length > packet.length) return null;
    labels.push(packet.toString('latin1', at + 1, at + 1 + length).toLowerCase());
    at += 1 + length;
  }
  return null;
}

/** The answer to `query`: same id and question, NXDOMAIN, no records. */
export function dnsNameErrorReply(query: Buffer): Buffer {
  let end = 12;
  while (end < query.length && query[end] !== 0) end += 1 + query[end]!;
  const question = query.subarray(12, Math.min(query.length, end + 5));
  const header = Buffer.alloc(12);
  query.copy(header, 0, 0, 2); // id
  // QR, the query's opcode and RD; RA; RCODE 3 (name error).
  header[2] = 0x80 | (query[2]! & 0x79);
  header[3] = 0x80 | 3;
  header.writeUInt16BE(1, 4);
  return Buffer.concat([header, question]);
}
