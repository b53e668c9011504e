#!/bin/sh
# /init of esi's deploy ramdisk (busybox ash; built by src/ramdisk/, see docs/ramdisk.md).
#
# 1. mounts /proc, /sys, /dev (devtmpfs), /dev/pts, /run, /tmp;
# 2. copies its output to every active console (the kernel's /dev/console is only the last
#    console= of the command line; the serial console must get the logs too);
# 3. loads the drivers listed in /lib/modules/esi-load-order (dependencies first);
# 4. brings up lo and every NIC, runs busybox udhcpc on each (in the background: a NIC without
#    a cable must not block the boot) and waits up to 60 s for a first IPv4 address;
# 5. reads ironic-python-agent's kernel parameters (ironic_python_agent/config.py, IPA 9.4):
#    ipa-api-url (required; several comma-separated: the agent takes the first that answers),
#    ipa-insecure, ipa-debug, ipa-inspection-callback-url, ipa-agent-token,
#    ipa-global-request-id, ipa-advertise-host, ipa-listen-port;
# 6. runs the agent (`node /esi-agent.mjs agent …`, src/agent/) with every NIC's MAC; its exit
#    status 10 powers the machine off, 11 reboots it (src/agent/main.ts AGENT_EXIT_*), anything
#    else is logged and the agent restarted after a pause. Without ipa-api-url the machine stays
#    up and says so on the console every minute.
#
# The agent token is never printed. `ESI_INIT_LIB=1 sh init.sh` only defines the functions
# (the unit tests call them, with ESI_SYS pointing at a fake /sys and ESI_NODE at a stand-in program).

ESI_AGENT=/esi-agent.mjs
ESI_SYS=${ESI_SYS:-/sys}
ESI_NODE=${ESI_NODE:-node}
ESI_NL='
'

log() { echo "esi-init: $*"; }

# is_true VALUE: oslo's bool_from_string (1, t, true, on, y, yes; any case).
is_true() {
  case "$1" in
    1 | [tT] | [tT][rR][uU][eE] | [oO][nN] | [yY] | [yY][eE][sS]) return 0 ;;
  esac
  return 1
}

# cmdline_value NAME CMDLINE: the value of the last NAME=value word of CMDLINE (quotes
# removed), empty when absent; a bare NAME gives 1.
cmdline_value() {
  _want=$1
  _value=
  set -f
  for _word in $2; do
    case "$_word" in
      "$_want="*) _value=${_word#*=} ;;
      "$_want") _value=1 ;;
    esac
  done
  set +f
  _value=${_value#\"}
  _value=${_value%\"}
  printf '%s' "$_value"
}

# parse_cmdline CMDLINE: sets IPA_API_URL, IPA_INSECURE, IPA_DEBUG, IPA_INSPECTION_CALLBACK_URL,
# IPA_AGENT_TOKEN, IPA_GLOBAL_REQUEST_ID, IPA_ADVERTISE_HOST, IPA_LISTEN_PORT.
parse_cmdline() {
  IPA_API_URL=$(cmdline_value ipa-api-url "$1")
  IPA_INSECURE=$(cmdline_value ipa-insecure "$1")
  IPA_DEBUG=$(cmdline_value ipa-debug "$1")
  IPA_INSPECTION_CALLBACK_URL=$(cmdline_value ipa-inspection-callback-url "$1")
  IPA_AGENT_TOKEN=$(cmdline_value ipa-agent-token "$1")
  IPA_GLOBAL_REQUEST_ID=$(cmdline_value ipa-global-request-id "$1")
  IPA_ADVERTISE_HOST=$(cmdline_value ipa-advertise-host "$1")
  IPA_LISTEN_PORT=$(cmdline_value ipa-listen-port "$1")
}

# agent_argv MAC...: the agent's arguments after `node`, one per line, from the IPA_* variables.
agent_argv() {
  printf '%s\n' "$ESI_AGENT" agent --api-url "$IPA_API_URL" --disk auto --listen-host 0.0.0.0 \
    --listen-port "${IPA_LISTEN_PORT:-9999}" --advertise-host "${IPA_ADVERTISE_HOST:-auto}"
  for _mac in "$@"; do printf '%s\n' --mac "$_mac"; done
  if [ -n "$IPA_INSPECTION_CALLBACK_URL" ]; then printf '%s\n' --inspection-callback-url "$IPA_INSPECTION_CALLBACK_URL"; fi
  if [ -n "$IPA_AGENT_TOKEN" ]; then printf '%s\n' --agent-token "$IPA_AGENT_TOKEN"; fi
  if [ -n "$IPA_GLOBAL_REQUEST_ID" ]; then printf '%s\n' --global-request-id "$IPA_GLOBAL_REQUEST_ID"; fi
  if is_true "$IPA_DEBUG"; then printf '%s\n' --debug; fi
}

# nics: the physical network interfaces (those with a device link), one per line.
nics() {
  for _dev in "$ESI_SYS"/class/net/*; do
    [ -e "$_dev/device" ] && echo "${_dev##*/}"
  done
}

mount_filesystems() {
  mkdir -p /proc /sys /dev /run /tmp
  mount -t proc proc /proc
  mount -t sysfs sysfs /sys
  mount -t devtmpfs devtmpfs /dev
  mkdir -p /dev/pts
  mount -t devpts devpts /dev/pts
  mount -t tmpfs -o mode=0755 tmpfs /run
  mount -t tmpfs -o mode=1777 tmpfs /tmp
}

# Send stdout and stderr to every active console through tee (a FIFO in /run).
console_to_all() {
  _list=
  for _c in $(cat /sys/class/tty/console/active 2>/dev/null); do
    [ -c "/dev/$_c" ] && _list="$_list /dev/$_c"
  done
  # A write to a FIFO whose reader died must fail, not kill PID 1.
  trap '' PIPE
  set -f
  set -- $_list
  set +f
  if [ $# -le 1 ]; then
    ESI_CONSOLE=${1:-/dev/console}
    exec >"$ESI_CONSOLE" 2>&1 </dev/null
  else
    ESI_CONSOLE=/run/console.fifo
    mkfifo "$ESI_CONSOLE"
    tee "$@" <"$ESI_CONSOLE" >/dev/null &
    exec >"$ESI_CONSOLE" 2>&1 </dev/null
  fi
  export ESI_CONSOLE
}

load_modules() {
  _n=0
  _failed=
  while read -r _m; do
    [ -n "$_m" ] || continue
    if insmod "/lib/modules/$_m" 2>/dev/null; then _n=$((_n + 1)); else _failed="$_failed ${_m##*/}"; fi
  done </lib/modules/esi-load-order
  log "loaded $_n kernel modules${_failed:+ (not loaded:$_failed)}"
}

# Bring up every NIC and start DHCP on each; wait up to $1 seconds for a first address.
start_network() {
  ip link set lo up
  for _i in $(nics); do
    ip link set "$_i" up
    udhcpc -f -i "$_i" -s /etc/udhcpc.script -t 4 -T 2 -A 5 -x hostname:esi-ramdisk >"/run/udhcpc.$_i.log" 2>&1 &
  done
  _waited=0
  while [ "$_waited" -lt "$1" ]; do
    if ip -4 -o addr show scope global 2>/dev/null | grep -q inet; then return 0; fi
    sleep 1
    _waited=$((_waited + 1))
  done
  log "no DHCP address after $1 s; going on (DHCP keeps trying in the background)"
}

# Without ipa-api-url, say so on the console every minute, forever (the machine stays up).
wait_for_api_url() {
  while [ -z "$IPA_API_URL" ]; do
    log "ERROR: no ipa-api-url=<baremetal API URL> on the kernel command line; the agent cannot start."
    log "Boot this ramdisk with ipa-api-url=http://<esi host>:<port>/baremetal (see docs/ramdisk.md)."
    sleep 60
  done
}

# Run the agent until it asks for power off or reboot.
run_agent() {
  if is_true "$IPA_INSECURE"; then export NODE_TLS_REJECT_UNAUTHORIZED=0; fi
  _macs=
  for _i in $(nics); do _macs="$_macs $(cat "$ESI_SYS/class/net/$_i/address")"; done
  set -f
  # shellcheck disable=SC2086
  _argv=$(agent_argv $_macs)
  _old_ifs=$IFS
  IFS=$ESI_NL
  # shellcheck disable=SC2086
  set -- $_argv
  IFS=$_old_ifs
  set +f
  while true; do
    log "starting the deploy agent (API ${IPA_API_URL}; MACs${_macs})"
    "$ESI_NODE" "$@"
    _rc=$?
    case $_rc in
      10)
        log "the agent asked to power off"
        sync
        poweroff -f
        ;;
      11)
        log "the agent asked to reboot"
        sync
        reboot -f
        ;;
      *) log "the agent exited with status $_rc; restarting it in 10 s" ;;
    esac
    sleep 10
  done
}

main() {
  export PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root
  mount_filesystems
  console_to_all
  log "esi deploy ramdisk, kernel $(uname -r)"
  hostname esi-ramdisk
  [ -d /sys/firmware/efi/efivars ] && mount -t efivarfs efivarfs /sys/firmware/efi/efivars 2>/dev/null
  load_modules
  parse_cmdline "$(cat /proc/cmdline)"
  start_network 60
  ip -4 -o addr show scope global | while read -r _ _dev _ _addr _; do log "$_dev: $_addr"; done
  wait_for_api_url
  run_agent
}

if [ "$$" = 1 ] || [ "${ESI_INIT_LIB:-}" != 1 ]; then
  # The kernel hands unknown name=value parameters to /init as its environment: ignore these.
  ESI_SYS=/sys
  ESI_NODE=node
  main
  # PID 1 must never end.
  while true; do sleep 3600; done
fi
