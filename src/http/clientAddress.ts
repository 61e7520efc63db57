/*
 * The client's address, which the per-address limits count by (wrong API
 * keys, failed logins: rateLimiter.ts, apiKey.ts). Behind a proxy every
 * connection comes from the proxy, so every client would share one count:
 * ten wrong keys from one client would refuse the right key of all others.
 *
 * So the address a proxy reports is taken, but only from a proxy this
 * server trusts (TRUSTED_PROXIES: addresses and CIDR ranges, none by
 * default); from anyone else a reported address is ignored, as it could be
 * anything. A proxy reports it in one of two ways:
 *
 *   - PROXY protocol v2, a binary header before the first request of a
 *     connection, which uWebSockets.js reads (getProxiedRemoteAddress): the
 *     way the generated HAProxy configuration sends it (`send-proxy-v2`,
 *     cluster/haproxyConfig.ts), which a client's own headers cannot touch;
 *   - `X-Forwarded-For: client, proxy1, proxy2`, each proxy appending the
 *     address it was connected from (nginx, cloud load balancers).
 *
 * Both give a chain of hops ending with the connection's peer:
 * [...X-Forwarded-For, PROXY address, peer]. Walking it from the right, the
 * first address that is not a trusted proxy is the client (the "rightmost
 * untrusted hop"): everything left of it was written by that client and
 * proves nothing; everything right of it by proxies we trust. An entry that
 * is not an address ends the walk at the trusted hop right of it. Addresses
 * are compared in their canonical text (`::ffff:127.0.0.1` is 127.0.0.1,
 * zeros compressed), so one client has one count whatever form names it.
 */
import net from 'node:net'

/** The addresses and ranges whose reports of a client's address are believed (TRUSTED_PROXIES). */
export class TrustedProxies {
  private readonly list = new net.BlockList()
  readonly empty: boolean

  /** `entries`: addresses and CIDR ranges, as config.ts checked them (parseTrustedProxies). */
  constructor(entries: readonly string[]) {
    this.empty = entries.length === 0
    for (const entry of entries) {
      const [address, bits] = entry.split('/') as [string, string | undefined]
      const family = net.isIPv6(address) ? 'ipv6' : 'ipv4'
      if (bits === undefined) this.list.addAddress(address, family)
      else this.list.addSubnet(address, Number(bits), family)
    }
  }

  has(address: string): boolean {
    if (this.empty) return false
    const family = net.isIP(address)
    return family !== 0 && this.list.check(address, family === 6 ? 'ipv6' : 'ipv4')
  }
}

/**
 * An address in one text: IPv4 as it is, IPv6 with its zeros compressed (uWS writes every group in full), an
 * IPv4-mapped IPv6 address as its IPv4; null for text that is no address (a port or brackets are taken off first).
 */
export function canonicalAddress(text: string): string | null {
  let address = text.trim()
  if (address.startsWith('[')) address = address.slice(1, address.indexOf(']') < 0 ? undefined : address.indexOf(']'))
  else if (/^\d+\.\d+\.\d+\.\d+:\d+$/.test(address)) address = address.slice(0, address.lastIndexOf(':'))
  const family = net.isIP(address)
  if (family === 4) return address
  if (family !== 6) return null
  const compressed = new URL(`http://[${address}]/`).hostname.slice(1, -1)
  return mappedHex(compressed) ?? compressed
}

/** `::ffff:7f00:1` (how the URL parser writes a mapped address) as 127.0.0.1. */
function mappedHex(compressed: string): string | null {
  const match = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(compressed)
  if (match === null) return null
  const high = parseInt(match[1] as string, 16)
  const low = parseInt(match[2] as string, 16)
  return `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`
}

/**
 * The client's address from the connection's `peer`, the address a PROXY protocol header gave (`proxied`, '' for
 * none) and the X-Forwarded-For header: the rightmost hop that is not a trusted proxy (see the top).
 */
export function clientAddressOf(peer: string, proxied: string, forwardedFor: string | undefined, trusted: TrustedProxies): string {
  const peerAddress = canonicalAddress(peer) ?? peer
  if (!trusted.has(peerAddress)) return peerAddress
  const hops = forwardedFor === undefined ? [] : forwardedFor.split(',')
  if (proxied !== '') hops.push(proxied)
  let client = peerAddress
  for (let index = hops.length - 1; index >= 0; index -= 1) {
    const hop = canonicalAddress(hops[index] as string)
    if (hop === null) return client
    client = hop
    if (!trusted.has(hop)) return hop
  }
  return client
}
