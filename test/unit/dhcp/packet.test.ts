/**
 * DHCP messages as bytes (src/drivers/dhcp/packet.ts) and the probe's made-up MACs
 * (src/drivers/dhcp/rogue.ts).
 */
import { describe, expect, it } from 'vitest';
import { bootFileOf, decodeMessage, DHCP_MESSAGE, DHCP_OPTION, encodeDiscover, macBytes } from '../../../src/drivers/dhcp/packet.ts';
import { randomLocalMac } from '../../../src/drivers/dhcp/rogue.ts';

/** A server reply: header fields, then options as [code, bytes]. */
function reply(o: {
  xid: number;
  mac: string;
  yiaddr: number[];
  file?: string;
  options: Array<[number, number[]]>;
  fileField?: Buffer;
}): Buffer {
  const h = Buffer.alloc(236);
  h[0] = 2;
  h[1] = 1;
  h[2] = 6;
  h.writeUInt32BE(o.xid, 4);
  h.writeUInt16BE(0x8000, 10);
  Buffer.from(o.yiaddr).copy(h, 16);
  Buffer.from([10, 77, 0, 1]).copy(h, 20);
  macBytes(o.mac).copy(h, 28);
  if (o.fileField) o.fileField.copy(h, 108);
  else if (o.file) Buffer.from(o.file).copy(h, 108);
  const opts = o.options.flatMap(([c, v]) => [c, v.length, ...v]);
  return Buffer.concat([h, Buffer.from([99, 130, 83, 99, ...opts, 255])]);
}

describe('DHCP messages', () => {
  it('encodes a DISCOVER with broadcast flag, client id, user class and client architecture', () => {
    const buf = encodeDiscover({ xid: 0xdeadbeef, mac: '02:00:5E:10:00:01', broadcast: true, userClass: 'iPXE', clientArch: 7 });
    expect(buf.length).toBeGreaterThanOrEqual(300);
    const m = decodeMessage(buf)!;
    expect(m).toMatchObject({
      op: 1,
      xid: 0xdeadbeef,
      flags: 0x8000,
      mac: '02:00:5e:10:00:01',
      messageType: DHCP_MESSAGE.DISCOVER,
      serverId: null,
    });
    expect([...m.options.get(DHCP_OPTION.CLIENT_ID)!]).toEqual([1, 2, 0, 0x5e, 0x10, 0, 1]);
    expect(m.options.get(DHCP_OPTION.USER_CLASS)!.toString()).toBe('iPXE');
    expect([...m.options.get(DHCP_OPTION.CLIENT_ARCH)!]).toEqual([0, 7]);
    expect([...m.options.get(DHCP_OPTION.PARAMETER_LIST)!]).toContain(DHCP_OPTION.BOOTFILE);
    expect(decodeMessage(encodeDiscover({ xid: 1, mac: '02:00:00:00:00:01' }))!.flags).toBe(0);
  });

  it('decodes an OFFER: offered address, server id, boot file from the file field or option 67', () => {
    const mac = '02:aa:bb:cc:dd:ee';
    const offer = decodeMessage(
      reply({
        xid: 7,
        mac,
        yiaddr: [10, 77, 0, 50],
        file: 'ipxe.efi',
        options: [
          [53, [2]],
          [54, [10, 77, 0, 2]],
          [3, [10, 77, 0, 1]],
        ],
      }),
    )!;
    expect(offer).toMatchObject({
      op: 2,
      xid: 7,
      mac,
      yiaddr: '10.77.0.50',
      siaddr: '10.77.0.1',
      messageType: 2,
      serverId: '10.77.0.2',
      file: 'ipxe.efi',
    });
    expect(bootFileOf(offer)).toBe('ipxe.efi');
    const url = 'http://10.77.0.1/boot.ipxe';
    const withOption = decodeMessage(
      reply({
        xid: 7,
        mac,
        yiaddr: [0, 0, 0, 0],
        options: [
          [53, [2]],
          [67, [...Buffer.from(url)]],
        ],
      }),
    )!;
    expect(bootFileOf(withOption)).toBe(url);
    expect(bootFileOf(decodeMessage(reply({ xid: 7, mac, yiaddr: [0, 0, 0, 0], options: [[53, [2]]] }))!)).toBeNull();
  });

  it('reads options overloaded into the file field (option 52) and concatenates split options (RFC 3396)', () => {
    const fileField = Buffer.alloc(128);
    Buffer.from([67, 4, ...Buffer.from('a.ef'), 255]).copy(fileField);
    const m = decodeMessage(
      reply({
        xid: 9,
        mac: '02:00:00:00:00:09',
        yiaddr: [0, 0, 0, 0],
        fileField,
        options: [
          [53, [2]],
          [52, [1]],
          [12, [104]],
          [12, [105]],
        ],
      }),
    )!;
    expect(m.file).toBe('');
    expect(bootFileOf(m)).toBe('a.ef');
    expect(m.options.get(DHCP_OPTION.HOSTNAME)!.toString()).toBe('hi');
  });

  it('rejects what is not a DHCP message, and survives truncated options', () => {
    expect(decodeMessage(Buffer.alloc(100))).toBeNull();
    expect(decodeMessage(Buffer.alloc(300))).toBeNull();
    const cut = reply({ xid: 1, mac: '02:00:00:00:00:01', yiaddr: [0, 0, 0, 0], options: [[53, [2]]] });
    const truncated = Buffer.concat([cut.subarray(0, cut.length - 1), Buffer.from([54, 4, 10])]);
    expect(decodeMessage(truncated)).toMatchObject({ messageType: 2, serverId: null });
    expect(() => macBytes('02:00:00:00:00')).toThrow(/not a MAC/);
  });

  it('makes up locally-administered unicast MACs', () => {
    for (let i = 0; i < 50; i++) {
      const mac = randomLocalMac();
      expect(mac).toMatch(/^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/);
      expect(parseInt(mac.slice(0, 2), 16) & 0x03).toBe(0x02);
    }
  });
});
