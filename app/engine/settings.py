"""Where Benchbay keeps its files, and the few settings a user can change."""
from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import platformdirs

from app.errors import AppError

APP_NAME = "benchbay"
HOME_ENV = "BENCHBAY_HOME"
DB_ENV = "BENCHBAY_DB"


def default_home() -> Path:
    """Config directory: known_hosts and settings. BENCHBAY_HOME overrides it."""
    env = os.environ.get(HOME_ENV)
    return Path(env).expanduser() if env else Path(platformdirs.user_config_dir(APP_NAME))


def default_db_url() -> str:
    env = os.environ.get(DB_ENV)
    if env:
        return env
    from storage.db import default_db_url as store_default

    return store_default()


@dataclass
class Settings:
    connect_timeout: float = 10.0      # seconds for DNS, TCP, SSH banner and authentication together
    command_timeout: float = 120.0     # seconds for one agent call such as gathering facts
    # seconds a run tries to reconnect after its link went; then the link is given up and the run, which
    # goes on on its host, is stored as "lost link" and collected when the host answers again
    reconnect_budget: float = 120.0
    ssh_config: str = "~/.ssh/config"
    user_known_hosts: str = "~/.ssh/known_hosts"
    report_customer: str = ""          # the PDF export's last Customer / project and Author, offered again
    report_author: str = ""

    @classmethod
    def load(cls, home: Path) -> Settings:
        path = home / "settings.json"
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return cls()
        except (OSError, ValueError) as exc:
            raise SettingsError(f"{path}: unreadable settings ({exc}); fix or remove the file") from exc
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in raw.items() if k in known} if isinstance(raw, dict) else {}
        settings = cls(**values)
        if not (0.5 <= float(settings.connect_timeout) <= 300):
            raise SettingsError(f"{path}: connect_timeout must be between 0.5 and 300 seconds")
        if not (1 <= float(settings.reconnect_budget) <= 3600):
            raise SettingsError(f"{path}: reconnect_budget must be between 1 and 3600 seconds")
        return settings

    def save(self, home: Path) -> None:
        home.mkdir(parents=True, exist_ok=True)
        tmp = home / "settings.json.tmp"
        tmp.write_text(json.dumps(asdict(self), indent=2) + "\n", encoding="utf-8")
        tmp.replace(home / "settings.json")


class SettingsError(AppError):
    pass
