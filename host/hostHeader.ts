/**
 * The `Host` header check of the browser host, against DNS rebinding: a page on another site
 * whose name was re-pointed at this machine sends its own name as `Host`, so only the names of
 * this server itself are accepted. Bound to loopback: `127.0.0.1`, `localhost` and `[::1]` with
 * the port. Bound to all interfaces (`0.0.0.0`, `::`): those, plus every address of this
 * machine's network interfaces (IPv4 as is, IPv6 in brackets), with the port; never a host
 * name, since any name can be made to resolve here. Bound to one address: that address too.
 */
import { networkInterfaces } from 'node:os';

/** The loopback names with `port`. */
function loopbackNames(port: number): string[] {
  return [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`];
}

/** `address` as it appears in a Host header (IPv6 in brackets). */
function asHostName(address: string): string {
  return address.includes(':') && !address.startsWith('[') ? `[${address}]` : address;
}

/** Every address of this machine's interfaces, IPv4 and IPv6 (link-local scope ids dropped). */
export function machineAddresses(): string[] {
  const out: string[] = [];
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) out.push(a.address.replace(/%.*$/, ''));
  }
  return out;
}

/**
 * The `Host` header values a server bound to `bindHost`:`port` accepts (lower case).
 * @param addresses this machine's addresses (default {@link machineAddresses}; read per call, so
 *   an address gained after start counts).
 */
export function allowedHostHeaders(bindHost: string, port: number, addresses: () => readonly string[] = machineAddresses): string[] {
  const names = loopbackNames(port);
  if (bindHost === '0.0.0.0' || bindHost === '::' || bindHost === '[::]') {
    for (const a of addresses()) names.push(`${asHostName(a)}:${port}`);
  } else {
    names.push(`${asHostName(bindHost)}:${port}`);
  }
  return [...new Set(names.map((n) => n.toLowerCase()))];
}
