#!/bin/sh
# busybox udhcpc event script of esi's deploy ramdisk (/etc/udhcpc.script; started by
# src/ramdisk/init.sh, one udhcpc per NIC). udhcpc calls it with the event in $1 and the lease in
# the environment: interface, ip, mask (prefix length) or subnet, broadcast, router, dns, domain.
#
# - deconfig: the NIC's IPv4 addresses are removed, the link stays up;
# - bound/renew: the address is set (only when it changed), default routes through the routers
#   (metric 100 + the NIC's index, so that several NICs with routers coexist), and the NIC's
#   name servers are written to /run/dhcp/<interface>.resolv; /etc/resolv.conf joins them all;
# - leasefail/nak: nothing (udhcpc keeps trying).
# Each lease is reported on the console ($ESI_CONSOLE, set by the init).

say() {
  if [ -n "$ESI_CONSOLE" ]; then echo "esi-dhcp: $*" >"$ESI_CONSOLE"; fi
}

# prefix_of NETMASK: the prefix length of a dotted netmask.
prefix_of() {
  _bits=0
  _old_ifs=$IFS
  IFS=.
  for _octet in $1; do
    while [ "$_octet" -gt 0 ]; do
      _bits=$((_bits + (_octet & 1)))
      _octet=$((_octet >> 1))
    done
  done
  IFS=$_old_ifs
  echo "$_bits"
}

write_resolv() {
  mkdir -p /run/dhcp
  : >"/run/dhcp/$interface.resolv"
  [ -n "$domain" ] && echo "search $domain" >>"/run/dhcp/$interface.resolv"
  for _ns in $dns; do echo "nameserver $_ns" >>"/run/dhcp/$interface.resolv"; done
  cat /run/dhcp/*.resolv >/etc/resolv.conf 2>/dev/null
}

case "$1" in
  deconfig)
    ip -4 addr flush dev "$interface"
    ip link set "$interface" up
    rm -f "/run/dhcp/$interface.resolv"
    ;;
  bound | renew)
    prefix=${mask:-$(prefix_of "${subnet:-255.255.255.0}")}
    if ! ip -4 addr show dev "$interface" | grep -q "inet $ip/$prefix "; then
      ip -4 addr flush dev "$interface"
      ip addr add "$ip/$prefix" broadcast "${broadcast:-+}" dev "$interface"
    fi
    if [ -n "$router" ]; then
      while ip route del default dev "$interface" 2>/dev/null; do :; done
      metric=$((100 + $(cat "/sys/class/net/$interface/ifindex")))
      for r in $router; do
        ip route add default via "$r" dev "$interface" metric "$metric"
        metric=$((metric + 1))
      done
    fi
    write_resolv
    say "$interface: $1 $ip/$prefix, router ${router:-none}, DNS ${dns:-none}"
    ;;
esac
exit 0
