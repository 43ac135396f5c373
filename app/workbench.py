"""What a user can do with Benchbay, without Qt: the GUI and the CLI both call this."""
from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

import paramiko

from app.catalogue import CATALOGUE
from app.engine import passwords
from app.engine.attach import AttachOutcome, attach_run, collect_orphans, orphan_candidates
from app.engine.dbload_watch import run_watching_target
from app.engine.hosts_map import checked_record, spec_from_record
from app.engine.lock import RunLock
from app.engine.orchestrator import EventCallback, RunControl, RunOutcome, RunRequest, SampleCallback, execute_run
from app.engine.settings import Settings, default_db_url, default_home
from app.errors import AppError
from remote.agent_package import AGENT_VERSION
from remote.connect import connect as open_transport
from remote.connect import scan_host_key
from remote.errors import HostKeyChanged, HostKeyError, UnknownHostKey
from remote.facts import gather_facts, with_clock
from remote.hostkeys import CHANGED, UNKNOWN, KnownHosts, fingerprint_sha256, host_key_id
from remote.hostspec import AUTH_PASSWORD, LOCAL_HOST, HostSpec
from remote.sshconfig import SSHConfigFile
from remote.transport import Transport
from storage.db import Store, open_store
from storage.errors import NotFound
from storage.migrate import describe as describe_store
from storage.records import AttachableRun, RunDetail, RunRecord, RunStatus, SavedComparison, SeriesData
from storage.run_exchange import ImportReport, comparison_run_ids, import_file, write_runs

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class HostKeyInfo:
    """The key a host offers now, and how it stands against what the user trusted."""

    host: str
    host_id: str          # the known_hosts name: "addr" or "[addr]:port"
    key_type: str
    fingerprint: str
    key_blob: bytes
    status: str           # remote.hostkeys TRUSTED, UNKNOWN or CHANGED
    expected_fingerprint: str | None = None


@dataclass(frozen=True)
class FactsOutcome:
    run_id: int
    host: str
    facts: dict


class Workbench:
    """One per process. Repositories open a session per call, so workers can share it."""

    def __init__(
        self,
        home: Path | str | None = None,
        db_url: str | None = None,
        ssh_config_path: Path | str | None = None,
        user_known_hosts: Path | str | None = None,
    ) -> None:
        self.home = Path(home) if home else default_home()
        self.home.mkdir(parents=True, exist_ok=True)
        os.chmod(self.home, 0o700)
        self.settings = Settings.load(self.home)
        self.store: Store = open_store(db_url or default_db_url())
        user_kh = Path(user_known_hosts or self.settings.user_known_hosts).expanduser()
        self.known_hosts = KnownHosts(self.home / "known_hosts", user_kh)
        self.ssh_config = SSHConfigFile(Path(ssh_config_path or self.settings.ssh_config).expanduser())
        # Passwords typed this session stay in memory only, never on disk.
        self._session_passwords: dict[str, str] = {}
        self._lock = threading.Lock()

    def close(self) -> None:
        self._session_passwords.clear()
        self.store.close()

    # -- inventory -------------------------------------------------------------------------------

    def list_hosts(self) -> list[HostSpec]:
        return [LOCAL_HOST, *(spec_from_record(record) for record in self.store.hosts.list())]

    def get_host(self, name: str) -> HostSpec:
        if name == LOCAL_HOST.name:
            return LOCAL_HOST
        record = self.store.hosts.get(name)
        if record is not None:
            return spec_from_record(record)
        if name in self.ssh_config.aliases():
            return HostSpec(name=name)  # used as it is in ~/.ssh/config
        raise NotFound(f"no host named {name!r}: add it with `benchbay host add {name} --address ...`")

    def add_host(self, spec: HostSpec) -> None:
        self.store.hosts.add(checked_record(spec))

    def update_host(self, old_name: str, spec: HostSpec) -> None:
        self.store.hosts.update(old_name, checked_record(spec, renaming_from=old_name))
        if old_name != spec.name:
            self._session_passwords.pop(old_name, None)
            passwords.forget_password(old_name)

    def remove_host(self, name: str) -> None:
        if not self.store.hosts.remove(name):
            raise NotFound(f"no host named {name!r} in the inventory")
        self._session_passwords.pop(name, None)
        passwords.forget_password(name)

    def ssh_config_aliases(self) -> list[str]:
        return self.ssh_config.aliases()

    # -- host keys -------------------------------------------------------------------------------

    def host_key(self, name: str) -> HostKeyInfo:
        """Ask the host for its key (no login) and compare it with the trusted ones."""
        spec = self.get_host(name)
        if spec.is_local:
            raise AppError("the built-in host 'local' is this computer: it has no SSH host key")
        host_id, key = scan_host_key(
            spec,
            known_hosts=self.known_hosts,
            ssh_config=self.ssh_config,
            timeout=self.settings.connect_timeout,
            resolve_jump=self._jump_spec,
        )
        status, expected = self.known_hosts.check(host_id, key)
        blob = key.asbytes()
        expected_fp = fingerprint_sha256(expected.asbytes()) if expected is not None else None
        if expected is not None and expected.asbytes() == blob:  # check() names the offered key when revoked
            expected_fp = "none: this key or the CA that signed it is marked @revoked in known_hosts"
        return HostKeyInfo(name, host_id, key.get_name(), fingerprint_sha256(blob), blob, status, expected_fp)

    def trust_host(self, name: str, expected_fingerprint: str | None = None) -> HostKeyInfo:
        """Trust the key the host offers now; with a fingerprint, only if it is that key."""
        info = self.host_key(name)
        if info.status == CHANGED:
            raise HostKeyChanged(info.host_id, info.key_type, info.fingerprint, info.expected_fingerprint or "?")
        if expected_fingerprint and _normalise_fp(expected_fingerprint) != info.fingerprint:
            raise HostKeyError(
                f"{info.host_id} offers {info.key_type} {info.fingerprint}, not {expected_fingerprint}: "
                "key NOT trusted. Check the fingerprint with the server's administrator"
            )
        if info.status == UNKNOWN:
            self.trust_key(info)
        return info

    def trust_key(self, offered: UnknownHostKey | HostKeyInfo) -> None:
        """Store a key the user has just accepted (after seeing its fingerprint)."""
        if isinstance(offered, UnknownHostKey):
            host_id, key_type, blob = offered.known_as, offered.key_type, offered.key_blob
        else:
            host_id, key_type, blob = offered.host_id, offered.key_type, offered.key_blob
        key = paramiko.PKey.from_type_string(key_type, blob)
        with self._lock:
            self.known_hosts.add(host_id, key)

    def untrust_host(self, name: str) -> int:
        spec = self.get_host(name)
        resolved = self.ssh_config.resolve(spec)
        with self._lock:
            return self.known_hosts.remove(host_key_id(resolved.address, resolved.port))

    # -- connecting ------------------------------------------------------------------------------

    def needs_password(self, name: str) -> bool:
        """True when connecting would have to ask the user for a password first."""
        spec = self.get_host(name)
        return spec.auth == AUTH_PASSWORD and self._known_password(spec) is None

    def remember_password(self, name: str, password: str) -> bool:
        """Keep a password in the OS keyring (the user opted in); False when there is no keyring."""
        if not passwords.save_password(name, password):
            return False
        record = self.store.hosts.get(name)
        if record is not None and not record.keyring:
            # from now on connecting to this host looks the password up in the keyring
            self.store.hosts.update(name, replace(record, keyring=True))
        return True

    def connect(self, name: str, password: str | None = None) -> Transport:
        spec = self.get_host(name)
        if password is None:
            password = self._known_password(spec)
        transport = open_transport(
            spec,
            known_hosts=self.known_hosts,
            ssh_config=self.ssh_config,
            timeout=self.settings.connect_timeout,
            password=password,
            resolve_jump=self._jump_spec,
        )
        if password is not None and spec.auth == AUTH_PASSWORD:
            self._session_passwords[spec.name] = password
        transport.run_dir_base = spec.run_dir   # the first place make_private_dir looks
        return transport

    def _known_password(self, spec: HostSpec) -> str | None:
        if spec.name in self._session_passwords:
            return self._session_passwords[spec.name]
        return passwords.load_password(spec.name) if spec.keyring else None

    def _jump_spec(self, name: str) -> HostSpec | None:
        try:
            return self.get_host(name)
        except NotFound:
            return None

    # -- facts -----------------------------------------------------------------------------------

    def gather_facts(self, name: str, password: str | None = None, test_dir: str | None = None) -> FactsOutcome:
        """Upload the agent, collect the host's facts, store them as a run, clean up the host."""
        spec = self.get_host(name)
        test_dir = test_dir or spec.test_dir or None
        # held while we gather: another Benchbay must not take this "running" run for a lost one
        lock = RunLock.create(self.home)
        try:
            with self.connect(name, password) as transport:
                run_id = self.store.runs.create(
                    spec.name, "facts", {"test_dir": test_dir or ""}, agent_version=AGENT_VERSION,
                    owner=lock.owner if lock else None,
                )
                try:
                    facts = gather_facts(transport, test_dir=test_dir, timeout=self.settings.command_timeout)
                    facts = with_clock(facts, transport)
                except BaseException as exc:
                    reason = str(exc) or type(exc).__name__
                    status = RunStatus.CANCELLED if isinstance(exc, KeyboardInterrupt) else RunStatus.FAILED
                    self.store.runs.finish(run_id, status, error=reason)
                    raise
                self.store.runs.add_facts(run_id, facts)
                self.store.runs.finish(run_id, RunStatus.DONE, engine="agent", engine_version=AGENT_VERSION)
        finally:
            if lock:
                lock.release()
        return FactsOutcome(run_id, spec.name, facts)

    def latest_facts(self, name: str) -> dict | None:
        found = self.store.runs.latest_facts(name)
        return found[1] if found else None

    # -- runs: running them ----------------------------------------------------------------------

    def validate_run_params(self, test: str, params: Mapping[str, Any]) -> dict[str, Any]:
        """The test's parameters with defaults filled in, as the agent will take them; ValueError says why not."""
        return CATALOGUE.validate(test, dict(params))

    def run(self, request: RunRequest, control: RunControl | None = None, on_sample: SampleCallback | None = None,
            on_event: EventCallback | None = None, password: str | None = None) -> RunOutcome:
        """Run a test or a monitor on one host and store it; blocks (call it from a worker thread)."""
        # dbload: the database server's own telemetry too, when it is a host of the inventory
        return run_watching_target(self, request,
                                   lambda: execute_run(self, request, control, on_sample, on_event, password),
                                   on_sample)

    def attach(self, run_id: int, follow: bool = True, force: bool = False, control: RunControl | None = None,
               on_sample: SampleCallback | None = None, on_event: EventCallback | None = None,
               password: str | None = None) -> AttachOutcome:
        """Take over a run whose workbench went away and store it (app.engine.attach.attach_run)."""
        return attach_run(self, run_id, follow, force, control, on_sample, on_event, password)

    def orphan_candidates(self) -> list[AttachableRun]:
        """Running runs this machine may take over."""
        return orphan_candidates(self)

    def running_runs(self) -> list[AttachableRun]:
        """Runs stored as running (not lost link), oldest first, with their remote state and owner."""
        return self.store.runs.running()

    def collect_orphans(self, follow: bool = False) -> list[AttachOutcome]:
        """Re-attach every run whose workbench went away; one outcome each, never raises for one run."""
        return collect_orphans(self, follow)

    # -- runs: what is stored --------------------------------------------------------------------

    @property
    def read_only(self) -> str:
        """Why the store cannot be written to, or "" when it can."""
        return self.store.read_only

    def store_description(self) -> str:
        """The store as the user names it (a SQLite file's path, a server's URL without password)."""
        return describe_store(self.store.engine.url)

    def list_runs(self, host: str | None = None, test: str | None = None, limit: int | None = None,
                  tag: str | None = None, since: datetime | None = None,
                  until: datetime | None = None, exclude_test: str | None = None) -> list[RunRecord]:
        """Newest first; since/until bound the start time; exclude_test leaves a kind out ("facts")."""
        return self.store.runs.list(host=host, test=test, limit=limit, tag=tag, since=since, until=until,
                                    exclude_test=exclude_test)

    def find_run(self, run_id: int) -> RunDetail | None:
        return self.store.runs.get(run_id)

    def repeat_runs(self, group: str) -> list[RunRecord]:
        """The runs of a repeated test, in their order."""
        return self.store.runs.repeats(group)

    def run_detail(self, run_id: int) -> RunDetail:
        """The run with its facts and results; NotFound when there is none."""
        detail = self.store.runs.get(run_id)
        if detail is None:
            raise NotFound(f"no run with id {run_id}: see `benchbay runs list`")
        return detail

    def run_by_uid(self, uid: str) -> RunDetail | None:
        return self.store.runs.get_by_uid(uid)

    def run_events(self, run_id: int) -> list[dict[str, Any]]:
        return self.store.runs.events(run_id)

    def run_series(self, run_id: int, names: Iterable[tuple[str, str]] | None = None) -> list[SeriesData]:
        return self.store.runs.series(run_id, names)

    def set_run_notes(self, run_id: int, text: str) -> None:
        self.store.runs.set_notes(run_id, text)

    def delete_run(self, run_id: int) -> bool:
        """Delete a stored run with its facts, results, series and events; False when there was none."""
        return self.store.runs.delete(run_id)

    def set_run_tags(self, run_id: int, tags: Iterable[str]) -> tuple[str, ...]:
        """Replace the run's tags; returns them as stored."""
        return self.store.runs.set_tags(run_id, tags)

    def latest_facts_taken(self, name: str) -> tuple[datetime, dict[str, Any]] | None:
        """The host's latest stored facts and when they were taken."""
        return self.store.runs.latest_facts(name)

    # -- saved comparisons and exchange files ----------------------------------------------------

    def list_comparisons(self) -> list[SavedComparison]:
        """Most recently changed first."""
        return self.store.comparisons.list()

    def get_comparison(self, comparison_id: int) -> SavedComparison:
        saved = self.store.comparisons.get(comparison_id)
        if saved is None:
            raise NotFound(f"no saved comparison with id {comparison_id}")
        return saved

    def save_comparison(self, saved_id: int | None, *, title: str, run_uids: Sequence[str],
                        baseline_uid: str | None, notes: str = "", customer: str = "", author: str = "",
                        options: Mapping[str, Any] | None = None) -> SavedComparison:
        """Save a new comparison (saved_id None) or replace what the saved one says."""
        fields = {"title": title, "run_uids": run_uids, "baseline_uid": baseline_uid, "notes": notes,
                  "customer": customer, "author": author, "options": dict(options or {})}
        comparisons = self.store.comparisons
        return comparisons.save(**fields) if saved_id is None else comparisons.update(saved_id, **fields)

    def comparison_run_ids(self, comparison_id: int) -> list[int]:
        return comparison_run_ids(self.store, comparison_id)

    def export_runs(self, run_ids: Sequence[int], out: TextIO, comparison_id: int | None = None) -> int:
        """Write the runs (and the saved comparison) as one JSON document; returns the number of runs."""
        return write_runs(self.store, run_ids, out, comparison_id)

    def import_runs(self, handle: TextIO, name: str) -> ImportReport:
        """Add the runs of an exported JSON document; name is the file as the user gave it."""
        return import_file(self.store, handle, name)


def _normalise_fp(text: str) -> str:
    text = text.strip()
    if not text.upper().startswith("SHA256:"):
        text = "SHA256:" + text
    return "SHA256:" + text.split(":", 1)[1].rstrip("=")
