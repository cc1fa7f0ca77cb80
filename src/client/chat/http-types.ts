/** The bridge's handlers take a fully read request and return a response; the HTTP server does the wire work. */
export interface BridgeRequest {
  rawBody: string;
  headers: Record<string, string | string[] | undefined>;
}

export interface BridgeResponse {
  status: number;
  body: unknown;
}

export const header = (req: BridgeRequest, name: string): string | undefined => {
  const value = req.headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
};
