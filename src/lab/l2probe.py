#!/usr/bin/python3
"""Layer-2 probe of the esi lab network (stdlib only; run inside a node's namespace).

Frames use the local experimental ethertype 0x88b5 and carry a marker, so nothing else on the
link is mistaken for them.

  l2probe.py send <ifname> <src-mac> <marker> [<vlan>|- [<interval-ms> <count>]]
      send one broadcast frame (or <count>, one every <interval-ms>), 802.1Q-tagged with
      <vlan> when given
  l2probe.py listen <ifname> <seconds> <marker> [first]
      print "ready", then one JSON line per probe frame with this marker received within
      <seconds>: {"vlan": <id or null>, "t": <CLOCK_MONOTONIC ns>} (tags the kernel stripped
      are read from PACKET_AUXDATA); with "first", exit after the first one
"""
import json
import socket
import struct
import sys
import time

ETH_P_ALL = 0x0003
PROBE = 0x88B5
SOL_PACKET = 263
PACKET_AUXDATA = 8
TP_STATUS_VLAN_VALID = 0x10
PACKET_OUTGOING = 4


def send(ifname, src, marker, vlan=None, interval_ms=0, count=1):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind((ifname, 0))
    head = b"\xff" * 6 + bytes.fromhex(src.replace(":", ""))
    if vlan is not None and vlan != "-":
        head += struct.pack("!HH", 0x8100, int(vlan) & 0x0FFF)
    frame = head + struct.pack("!H", PROBE) + marker.encode().ljust(46, b"\0")
    for i in range(int(count)):
        if i > 0:
            time.sleep(float(interval_ms) / 1000.0)
        try:
            s.send(frame)
        except OSError:
            pass  # the link may be down while the switch port is quarantined


def listen(ifname, seconds, marker, first=None):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.setsockopt(SOL_PACKET, PACKET_AUXDATA, 1)
    s.bind((ifname, 0))
    want = marker.encode()
    print("ready", flush=True)
    deadline = time.monotonic() + float(seconds)
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return
        s.settimeout(left)
        try:
            data, anc, _flags, addr = s.recvmsg(4096, socket.CMSG_SPACE(32))
        except socket.timeout:
            return
        if addr[2] == PACKET_OUTGOING:
            continue
        vlan = None
        etype = struct.unpack("!H", data[12:14])[0]
        payload = data[14:]
        if etype == 0x8100:
            vlan = struct.unpack("!H", data[14:16])[0] & 0x0FFF
            etype = struct.unpack("!H", data[16:18])[0]
            payload = data[18:]
        for level, kind, cdata in anc:
            if level == SOL_PACKET and kind == PACKET_AUXDATA and len(cdata) >= 20:
                status, _len, _snap, _mac, _net, tci = struct.unpack("IIIHHH", cdata[:18])
                if status & TP_STATUS_VLAN_VALID:
                    vlan = tci & 0x0FFF
        if etype == PROBE and payload.startswith(want):
            print(json.dumps({"vlan": vlan, "t": time.monotonic_ns()}), flush=True)
            if first == "first":
                return


if __name__ == "__main__":
    if sys.argv[1] == "send":
        send(sys.argv[2], sys.argv[3], sys.argv[4], *sys.argv[5:8])
    else:
        listen(sys.argv[2], sys.argv[3], sys.argv[4], *sys.argv[5:6])
