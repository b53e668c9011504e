/**
 * DHCPv4 messages as bytes (RFC 2131 §2 message format, RFC 2132 options): the DHCPDISCOVER
 * esi's probe sends and the replies it reads. Pure functions, no I/O; used by the rogue DHCP
 * probe (./probe.ts).
 *
 * Layout: a 236-byte BOOTP header (op, htype, hlen, hops, xid, secs, flags, ciaddr, yiaddr,
 * siaddr, giaddr, chaddr[16], sname[64], file[128]), the magic cookie 99.130.83.99, then
 * options as code/length/value, ending with 255. Option overload (52) is honoured when reading.
 */

/** DHCP message types (option 53), RFC 2132 §9.6. */
export const DHCP_MESSAGE = { DISCOVER: 1, OFFER: 2, REQUEST: 3, DECLINE: 4, ACK: 5, NAK: 6, RELEASE: 7, INFORM: 8 } as const;

/** Option codes used here (RFC 2132; 77 RFC 3004; 93 RFC 4578). */
export const DHCP_OPTION = {
  SUBNET_MASK: 1,
  ROUTER: 3,
  DNS: 6,
  HOSTNAME: 12,
  DOMAIN: 15,
  MTU: 26,
  OVERLOAD: 52,
  MESSAGE_TYPE: 53,
  SERVER_ID: 54,
  PARAMETER_LIST: 55,
  VENDOR_CLASS: 60,
  CLIENT_ID: 61,
  TFTP_SERVER: 66,
  BOOTFILE: 67,
  USER_CLASS: 77,
  CLIENT_ARCH: 93,
  CLASSLESS_ROUTES: 121,
  END: 255,
  PAD: 0,
} as const;

const COOKIE = Buffer.from([99, 130, 83, 99]);
const HEADER = 236;
/** BOOTP's minimum message size (RFC 1542 §2.1); some servers drop shorter requests. */
const MIN_SIZE = 300;

/** What a DHCPDISCOVER carries. */
export interface DiscoverOptions {
  /** Transaction id (32 bits). */
  readonly xid: number;
  /** Client hardware address, `aa:bb:cc:dd:ee:ff`. */
  readonly mac: string;
  /** Ask servers to broadcast their reply (flags bit 15): needed when the MAC is not the NIC's. */
  readonly broadcast?: boolean;
  /** User class (77) sent as iPXE sends it: the bare text, e.g. `iPXE`. */
  readonly userClass?: string;
  /** Client system architecture (93), e.g. 0 BIOS, 7 x86-64 UEFI. */
  readonly clientArch?: number;
  /** Vendor class identifier (60). */
  readonly vendorClass?: string;
  /** Options asked for (55); default router, DNS, domain, MTU, server id, TFTP server, boot file, routes. */
  readonly requested?: readonly number[];
}

/** A decoded DHCP message. */
export interface DhcpMessage {
  /** 1 request, 2 reply. */
  readonly op: number;
  readonly xid: number;
  readonly flags: number;
  /** chaddr as `aa:bb:cc:dd:ee:ff` (first six bytes). */
  readonly mac: string;
  readonly ciaddr: string;
  readonly yiaddr: string;
  readonly siaddr: string;
  readonly giaddr: string;
  /** The `sname` and `file` header fields (NUL-terminated text), unless overloaded with options. */
  readonly sname: string;
  readonly file: string;
  /** Options by code; a code seen twice has its values concatenated (RFC 3396). */
  readonly options: ReadonlyMap<number, Buffer>;
  /** Option 53, or null. */
  readonly messageType: number | null;
  /** Option 54 as an address, or null. */
  readonly serverId: string | null;
}

/** Parse `aa:bb:cc:dd:ee:ff` (or `-` separated) into six bytes. @throws Error for anything else */
export function macBytes(mac: string): Buffer {
  const parts = mac.split(/[:-]/);
  if (parts.length !== 6 || !parts.every((p) => /^[0-9a-fA-F]{2}$/.test(p))) throw new Error(`'${mac}' is not a MAC address`);
  return Buffer.from(parts.map((p) => parseInt(p, 16)));
}

function ipAt(buf: Buffer, at: number): string {
  return `${buf[at]}.${buf[at + 1]}.${buf[at + 2]}.${buf[at + 3]}`;
}

function text(buf: Buffer): string {
  const end = buf.indexOf(0);
  return buf.subarray(0, end === -1 ? buf.length : end).toString('latin1');
}

/** Encode a DHCPDISCOVER (at least 300 bytes). @throws Error for a bad MAC or an option value too long */
export function encodeDiscover(o: DiscoverOptions): Buffer {
  const header = Buffer.alloc(HEADER);
  header[0] = 1; // BOOTREQUEST
  header[1] = 1; // Ethernet
  header[2] = 6;
  header.writeUInt32BE(o.xid >>> 0, 4);
  header.writeUInt16BE(o.broadcast ? 0x8000 : 0, 10);
  const mac = macBytes(o.mac);
  mac.copy(header, 28);
  const opts: Buffer[] = [];
  const add = (code: number, value: Buffer): void => {
    if (value.length > 255) throw new Error(`DHCP option ${code} is longer than 255 bytes`);
    opts.push(Buffer.from([code, value.length]), value);
  };
  add(DHCP_OPTION.MESSAGE_TYPE, Buffer.from([DHCP_MESSAGE.DISCOVER]));
  add(DHCP_OPTION.CLIENT_ID, Buffer.concat([Buffer.from([1]), mac]));
  const requested = o.requested ?? [1, 3, 6, 15, 26, 54, 66, 67, 121];
  add(DHCP_OPTION.PARAMETER_LIST, Buffer.from(requested));
  if (o.vendorClass !== undefined) add(DHCP_OPTION.VENDOR_CLASS, Buffer.from(o.vendorClass, 'latin1'));
  if (o.userClass !== undefined) add(DHCP_OPTION.USER_CLASS, Buffer.from(o.userClass, 'latin1'));
  if (o.clientArch !== undefined) {
    const arch = Buffer.alloc(2);
    arch.writeUInt16BE(o.clientArch);
    add(DHCP_OPTION.CLIENT_ARCH, arch);
  }
  const body = Buffer.concat([header, COOKIE, ...opts, Buffer.from([DHCP_OPTION.END])]);
  return body.length >= MIN_SIZE ? body : Buffer.concat([body, Buffer.alloc(MIN_SIZE - body.length)]);
}

/** Read options from `buf` into `into`; stops at END or at a truncated option. */
function readOptions(buf: Buffer, into: Map<number, Buffer>): void {
  let i = 0;
  while (i < buf.length) {
    const code = buf[i]!;
    if (code === DHCP_OPTION.PAD) {
      i++;
      continue;
    }
    if (code === DHCP_OPTION.END || i + 1 >= buf.length) return;
    const len = buf[i + 1]!;
    if (i + 2 + len > buf.length) return;
    const value = buf.subarray(i + 2, i + 2 + len);
    const had = into.get(code);
    into.set(code, had ? Buffer.concat([had, value]) : Buffer.from(value));
    i += 2 + len;
  }
}

/**
 * Decode a DHCP message.
 * @returns the message, or null when `buf` is not one (too short, no magic cookie)
 */
export function decodeMessage(buf: Buffer): DhcpMessage | null {
  if (buf.length < HEADER + 4 || !buf.subarray(HEADER, HEADER + 4).equals(COOKIE)) return null;
  const options = new Map<number, Buffer>();
  readOptions(buf.subarray(HEADER + 4), options);
  const overload = options.get(DHCP_OPTION.OVERLOAD)?.[0] ?? 0;
  const fileField = buf.subarray(108, 236);
  const snameField = buf.subarray(44, 108);
  if (overload & 1) readOptions(fileField, options);
  if (overload & 2) readOptions(snameField, options);
  const type = options.get(DHCP_OPTION.MESSAGE_TYPE);
  const sid = options.get(DHCP_OPTION.SERVER_ID);
  return {
    op: buf[0]!,
    xid: buf.readUInt32BE(4),
    flags: buf.readUInt16BE(10),
    mac: [...buf.subarray(28, 34)].map((b) => b.toString(16).padStart(2, '0')).join(':'),
    ciaddr: ipAt(buf, 12),
    yiaddr: ipAt(buf, 16),
    siaddr: ipAt(buf, 20),
    giaddr: ipAt(buf, 24),
    sname: overload & 2 ? '' : text(snameField),
    file: overload & 1 ? '' : text(fileField),
    options,
    messageType: type && type.length === 1 ? type[0]! : null,
    serverId: sid && sid.length === 4 ? ipAt(sid, 0) : null,
  };
}

/** The boot file a reply names: option 67 when present, else the `file` header field; null when neither. */
export function bootFileOf(m: DhcpMessage): string | null {
  const opt = m.options.get(DHCP_OPTION.BOOTFILE);
  if (opt) return text(opt);
  return m.file === '' ? null : m.file;
}
