"""`benchbay host ...`: the inventory, host keys and facts."""
from __future__ import annotations

import argparse
import getpass
import sys
from concurrent.futures import ThreadPoolExecutor

from app.cli.commands import command_help
from app.cli.common import (
    UsageError,
    changed_tags,
    confirm,
    expand_hosts,
    interactive,
    one_host,
    print_json,
    print_table,
)
from app.cli.exits import Exit
from app.compare.prices import parse_price, price_text, price_to_json
from app.engine.host_prices import host_prices, set_host_price
from app.errors import USER_ERRORS
from app.summary.facts import facts_lines
from app.workbench import FactsOutcome, Workbench
from remote.errors import HostKeyChanged, HostKeyError, PasswordRequired, UnknownHostKey
from remote.hostspec import AUTH_KEY, AUTH_METHODS, HostSpec
from remote.run_dir import run_dir_problem
from storage.hosts import host_name_problem
from storage.records import HostPrice

FACTS_AT_ONCE = 16   # hosts gathering facts at a time: a rack takes seconds, not minutes


def add_parser(sub: argparse._SubParsersAction) -> None:
    host = sub.add_parser("host", help=command_help("host"))
    cmds = host.add_subparsers(dest="host_command", metavar="ACTION", required=True)

    add = cmds.add_parser("add", help="add an SSH host to the inventory")
    add.add_argument("name")
    _host_options(add, address_required=False)
    add.set_defaults(handler=_add)

    edit = cmds.add_parser("edit", help="change an SSH host")
    edit.add_argument("name")
    edit.add_argument("--rename", metavar="NEW")
    _host_options(edit, address_required=False)
    edit.set_defaults(handler=_edit)

    lst = cmds.add_parser("list", help="list hosts (local first)")
    lst.add_argument("--json", action="store_true")
    lst.set_defaults(handler=_list)

    rm = cmds.add_parser("remove", help="remove a host from the inventory (its runs stay)")
    rm.add_argument("name")
    rm.set_defaults(handler=_remove)

    trust = cmds.add_parser("trust", help="show the host's key fingerprint and trust it")
    trust.add_argument("name")
    trust.add_argument("--fingerprint", metavar="SHA256:...", help="trust only a key with this fingerprint")
    trust.set_defaults(handler=_trust)

    untrust = cmds.add_parser("untrust", help="forget the trusted key of a host")
    untrust.add_argument("name")
    untrust.set_defaults(handler=_untrust)

    facts = cmds.add_parser("facts", help="gather the hosts' facts with the agent and store them")
    facts.add_argument("names", nargs="+", metavar="NAME", help="a host, or @TAG for every host with that tag")
    facts.add_argument("--test-dir", metavar="DIR", help="directory whose filesystem to describe")
    facts.add_argument("--password-stdin", action="store_true",
                       help="read the SSH password from stdin (one password for every host named)")
    facts.add_argument("--json", action="store_true")
    facts.set_defaults(handler=_facts)


def _host_options(p: argparse.ArgumentParser, address_required: bool) -> None:
    p.add_argument("--address", required=address_required, help="host name or IP (default: from ~/.ssh/config)")
    p.add_argument("--port", type=_port, help="SSH port (default: from ~/.ssh/config, else 22)")
    p.add_argument("--user", help="login user (default: from ~/.ssh/config, else your user name)")
    p.add_argument("--key", metavar="PATH", help="private key file (implies --auth key)")
    p.add_argument("--auth", choices=AUTH_METHODS, help="auto: ssh-agent and keys (default); password: asked "
                   "when needed")
    p.add_argument("--keyring", action=argparse.BooleanOptionalAction, default=None,
                   help="keep the password in the OS keyring (never in a file)")
    p.add_argument("--jump", metavar="NAME", help="jump host: an inventory host or [user@]host[:port]")
    p.add_argument("--test-dir", metavar="DIR",
                   help="where the tests that write files (disk, mail storm, restore) write on this host, "
                        "unless a run sets test_dir")
    p.add_argument("--run-dir", metavar="DIR", help="where run directories go first on this host (absolute or "
                   "~/...; '' = $TMPDIR, /tmp, /var/tmp, whichever has room)")
    p.add_argument("--notes")
    p.add_argument("--price", metavar="PRICE", help="what the host costs, for figures per price unit in "
                   "comparisons: '120 EUR/month' (a rent) or '3400 EUR/once' (a purchase)")
    p.add_argument("--price-date", metavar="YYYY-MM-DD", help="when the price was seen (with --price)")
    p.add_argument("--price-source", metavar="TEXT", help="where the price was seen (with --price)")
    p.add_argument("--no-price", action="store_true", help="forget the host's price")
    p.add_argument("--tag", action="append", default=[], metavar="TAG", dest="tags",
                   help="put the host in a group, e.g. rack3 (repeatable): `benchbay run @rack3` runs on the group")
    p.add_argument("--untag", action="append", default=[], metavar="TAG", help="take the host out of a group")


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"port must be 1-65535, not {port}")
    return port


def _spec_from_args(base: HostSpec, args: argparse.Namespace) -> HostSpec:
    changes = {}
    for field, value in (("address", args.address), ("port", args.port), ("user", args.user),
                         ("jump", args.jump), ("test_dir", args.test_dir), ("run_dir", args.run_dir),
                         ("notes", args.notes),
                         ("keyring", args.keyring)):
        if value is not None:
            changes[field] = value
    if args.key is not None:
        changes["key_path"] = args.key
        changes["auth"] = AUTH_KEY
    if args.auth is not None:
        changes["auth"] = args.auth
    if args.tags or args.untag:
        changes["tags"] = changed_tags(base.tags, args.tags, args.untag)
    spec = base.with_changes(**changes)
    problem = run_dir_problem(spec.run_dir)
    if problem:
        raise UsageError(f"--run-dir: {problem}")
    if spec.auth == AUTH_KEY and not spec.key_path:
        raise UsageError("--auth key needs --key PATH")
    return spec


def _price_from_args(args: argparse.Namespace) -> HostPrice | None:
    """The price the options give (None: none given); checked before anything is stored."""
    if args.no_price and (args.price or args.price_date or args.price_source):
        raise UsageError("--no-price forgets the price: leave out --price, --price-date and --price-source")
    if not args.price:
        if args.price_date or args.price_source:
            raise UsageError("--price-date and --price-source go with --price AMOUNT CURRENCY/month")
        return None
    try:
        return parse_price(args.price, args.price_date or "", args.price_source or "")
    except ValueError as exc:
        raise UsageError(f"--price: {exc}") from None


def _validate_name(name: str) -> None:
    problem = host_name_problem(name)
    if problem:
        raise UsageError(problem)


_ONE_HOST = "name a host (`benchbay host list` shows each host's tags)"


def _add(bench: Workbench, args: argparse.Namespace) -> int:
    one_host(args.name, "host add", f"a host's name cannot begin with @ (it names a group); to put the host in "
             f"a group, add it by its name with --tag {args.name[1:71] or 'TAG'}")
    _validate_name(args.name)
    spec = _spec_from_args(HostSpec(name=args.name), args)
    if not spec.address and args.name not in bench.ssh_config_aliases():
        raise UsageError(f"--address is needed: {args.name!r} is not a Host in ~/.ssh/config")
    price = _price_from_args(args)
    bench.add_host(spec)
    if price is not None:
        set_host_price(bench, spec.name, price)
    print(f"added {spec.name}")
    return 0


def _edit(bench: Workbench, args: argparse.Namespace) -> int:
    one_host(args.name, "host edit", _ONE_HOST)
    old = bench.get_host(args.name)
    if old.is_local:
        raise UsageError("the built-in host 'local' cannot be edited")
    spec = _spec_from_args(old, args)
    if args.rename:
        _validate_name(args.rename)
        spec = spec.with_changes(name=args.rename)
    price = _price_from_args(args)
    bench.update_host(args.name, spec)
    if price is not None or args.no_price:
        set_host_price(bench, spec.name, price)
    print(f"updated {spec.name}")
    return 0


def _list(bench: Workbench, args: argparse.Namespace) -> int:
    hosts = bench.list_hosts()
    prices = host_prices(bench)
    if args.json:
        print_json([dict(_host_json(h), price=price_to_json(prices[h.name]) if h.name in prices else None)
                    for h in hosts])
        return 0
    rows = []
    for h in hosts:
        where = "this computer" if h.is_local else _where(h)
        rows.append([h.name, where, h.auth if not h.is_local else "-", h.jump or "-", ",".join(h.tags) or "-"]
                    + ([price_text(prices[h.name]) if h.name in prices else "-"] if prices else []))
    print_table(["NAME", "ADDRESS", "AUTH", "JUMP", "TAGS"] + (["PRICE"] if prices else []), rows)
    return 0


def _where(h: HostSpec) -> str:
    user = f"{h.user}@" if h.user else ""
    port = f":{h.port}" if h.port else ""
    return f"{user}{h.address or '(ssh config)'}{port}"


def _host_json(h: HostSpec) -> dict:
    return {
        "name": h.name, "local": h.is_local, "address": h.address, "port": h.port, "user": h.user,
        "auth": h.auth, "key_path": h.key_path, "jump": h.jump, "keyring": h.keyring,
        "test_dir": h.test_dir, "run_dir": h.run_dir, "notes": h.notes, "tags": list(h.tags),
    }


def _remove(bench: Workbench, args: argparse.Namespace) -> int:
    one_host(args.name, "host remove", _ONE_HOST)
    if args.name == "local":
        raise UsageError("the built-in host 'local' cannot be removed")
    bench.remove_host(args.name)
    print(f"removed {args.name} (its stored runs are kept)")
    return 0


def _trust(bench: Workbench, args: argparse.Namespace) -> int:
    one_host(args.name, "host trust", "each host's key is compared with its own fingerprint; " + _ONE_HOST)
    if args.fingerprint:
        info = bench.trust_host(args.name, expected_fingerprint=args.fingerprint)
        verb = "already trusted" if info.status == "trusted" else "trusted"
        print(f"{info.host_id}: {info.key_type} {info.fingerprint} {verb}")
        return 0
    info = bench.host_key(args.name)
    print(f"{info.host_id} offers {info.key_type} key {info.fingerprint}")
    if info.status == "trusted":
        print("this key is already trusted")
        return 0
    if info.status == "changed":
        raise HostKeyChanged(info.host_id, info.key_type, info.fingerprint, info.expected_fingerprint or "?")
    if not interactive():
        raise HostKeyError(
            f"{info.host_id}: not trusted. Compare the fingerprint with the server's, then run "
            f"`benchbay host trust {args.name} --fingerprint {info.fingerprint}`"
        )
    if not confirm("Does this match the fingerprint the server's administrator gave you?"):
        print("not trusted")
        return 1
    bench.trust_host(args.name, expected_fingerprint=info.fingerprint)
    print("trusted")
    return 0


def _untrust(bench: Workbench, args: argparse.Namespace) -> int:
    one_host(args.name, "host untrust", _ONE_HOST)
    removed = bench.untrust_host(args.name)
    print(f"removed {removed} trusted key(s) of {args.name}")
    return 0


def _facts(bench: Workbench, args: argparse.Namespace) -> int:
    """Facts of each host named (@TAG: each host of the group), several at once; a host that fails is said on
    stderr and the others go on; one that needs a password or an unknown key's approval asks when its turn to be
    said comes."""
    names = expand_hosts(bench, args.names)
    password = None
    if args.password_stdin:
        password = sys.stdin.readline().rstrip("\n")
    if len(names) == 1:
        outcome = _facts_of(bench, names[0], password, args.test_dir)
        if args.json:
            print_json(outcome.facts)
            return Exit.OK
        _print_facts(outcome)
        return Exit.OK
    results: list[dict] = []

    def attempt(name: str) -> FactsOutcome | BaseException:
        try:
            return bench.gather_facts(name, password=password, test_dir=args.test_dir)
        except (PasswordRequired, UnknownHostKey) as exc:
            return exc   # asked for at the terminal when its turn to be said comes
        except USER_ERRORS as exc:
            return exc

    # FACTS_AT_ONCE hosts at a time, each said in the order named as soon as it and those before it are done
    with ThreadPoolExecutor(min(FACTS_AT_ONCE, len(names)), thread_name_prefix="facts") as pool:
        for name, outcome in zip(names, pool.map(attempt, names), strict=True):
            if isinstance(outcome, (PasswordRequired, UnknownHostKey)) and interactive():
                try:   # at the terminal, from this thread only: one question at a time
                    outcome = _facts_of(bench, name, password, args.test_dir)
                except USER_ERRORS as exc:
                    outcome = exc
            if isinstance(outcome, BaseException):
                print(f"benchbay: {name}: {outcome}", file=sys.stderr, flush=True)
                results.append({"host": name, "error": str(outcome)})
                continue
            results.append({"host": outcome.host, "run_id": outcome.run_id, "facts": outcome.facts})
            if not args.json:
                _print_facts(outcome)
                print()
                sys.stdout.flush()
    failed = [r["host"] for r in results if "error" in r]
    if args.json:
        print_json(results)
    elif failed:
        print(f"# facts of {len(names) - len(failed)} of {len(names)} hosts stored; failed: {', '.join(failed)}")
    return Exit.FAILED if failed else Exit.OK


def _facts_of(bench: Workbench, name: str, password: str | None, test_dir: str | None) -> FactsOutcome:
    """Gather one host's facts; at a terminal, asks for a missing password or an unknown key."""
    try:
        return bench.gather_facts(name, password=password, test_dir=test_dir)
    except PasswordRequired:
        if not interactive():
            raise
        spec = bench.get_host(name)
        password = getpass.getpass(f"SSH password for {spec.user + '@' if spec.user else ''}{name}: ")
        return bench.gather_facts(name, password=password, test_dir=test_dir)
    except UnknownHostKey as exc:
        if not interactive():
            raise
        print(f"{exc.known_as} offers {exc.key_type} key {exc.fingerprint}", file=sys.stderr)
        if not confirm("Benchbay has never connected to it. Trust this key?"):
            raise
        bench.trust_key(exc)
        return bench.gather_facts(name, password=password, test_dir=test_dir)


def _print_facts(outcome: FactsOutcome) -> None:
    print(f"# facts of {outcome.host} (stored as run {outcome.run_id})")
    for line in facts_lines(outcome.facts):
        print(line)
