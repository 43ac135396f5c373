"""Start the window: check there is a display first, so a server user gets a hint, not a Qt abort."""
from __future__ import annotations

import ctypes.util
import gc
import os
import signal
import sys
from collections.abc import Callable

DISPLAY_HINT = (
    "Benchbay needs a display to open its window. On a server or over SSH without X forwarding use: "
    "xvfb-run benchbay   — or the command line: benchbay --help"
)
XCB_CURSOR_HINT = (
    "Benchbay cannot open its window: the Qt X11 plugin needs the xcb-cursor library, which is not "
    "installed. Install it (Debian/Ubuntu: sudo apt install libxcb-cursor0; Fedora/RHEL: "
    "sudo dnf install xcb-util-cursor; Arch: sudo pacman -S xcb-util-cursor) — or use the command line: "
    "benchbay --help"
)
# Platforms that draw without a display server
_HEADLESS_PLATFORMS = {"offscreen", "minimal", "vnc", "eglfs", "linuxfb", "vkkhrdisplay", "minimalegl"}


def display_problem(environ: dict[str, str] | None = None, platform: str | None = None,
                    find_library: Callable[[str], str | None] = ctypes.util.find_library) -> str | None:
    """Why Qt could not open a window here (the message to print), or None when it should work."""
    env = os.environ if environ is None else environ
    if not (platform or sys.platform).startswith("linux"):
        return None
    wanted = env.get("QT_QPA_PLATFORM", "").strip()
    # "wayland;xcb" lists fallbacks; "vnc:size=800x600" carries options
    candidates = [p.split(":", 1)[0].strip().lower() for p in wanted.split(";") if p.strip()]
    if any(p in _HEADLESS_PLATFORMS for p in candidates):
        return None
    has_x = bool(env.get("DISPLAY"))
    has_wayland = bool(env.get("WAYLAND_DISPLAY"))
    if candidates:
        usable = [p for p in candidates if (p == "xcb" and has_x) or (p.startswith("wayland") and has_wayland)]
    else:
        usable = (["wayland"] if has_wayland else []) + (["xcb"] if has_x else [])
    if not usable:
        return DISPLAY_HINT
    # Qt >= 6.5 refuses to load its xcb plugin without libxcb-cursor, and then aborts the process
    if usable[0] == "xcb" and find_library("xcb-cursor") is None:
        return XCB_CURSOR_HINT
    return None


def run_gui(workbench_factory: Callable[[], object], argv: list[str] | None = None) -> int:
    """Open the main window on the Workbench the factory returns; the exit code of the app."""
    problem = display_problem()
    if problem:
        print(problem, file=sys.stderr)
        return 1

    from PySide6.QtCore import QCoreApplication, Qt, QTimer
    from PySide6.QtGui import QGuiApplication, QIcon
    from PySide6.QtWidgets import QApplication, QMessageBox

    from app.errors import USER_ERRORS
    from app.gui.crash_dialog import install_excepthook
    from resources import resource_path, resource_text
    from widgets.theme import ThemeFollower

    QCoreApplication.setApplicationName("Benchbay")
    QCoreApplication.setOrganizationName("Benchbay")
    if QApplication.instance() is None:   # only before the application exists
        # 150 % stays 150 % (not rounded to 200 %): text and charts keep their intended size
        QGuiApplication.setHighDpiScaleFactorRoundingPolicy(Qt.HighDpiScaleFactorRoundingPolicy.PassThrough)
    app = QApplication.instance() or QApplication(argv if argv is not None else sys.argv[:1])
    # Python collects reference cycles in whichever thread happens to allocate: a store read in a worker
    # thread then destroyed closed windows' widgets and chart items off the GUI thread, which Qt does not
    # survive (an abort, seen in the test suite). Collection is switched off here and done by a timer in this
    # thread once the main window's code is loaded (pyqtgraph's GarbageCollector, in `opened`).
    collecting = gc.isenabled()
    gc.disable()
    QApplication.setDesktopFileName("benchbay")
    app.setStyle("Fusion")  # the same base on every desktop, so the stylesheet looks the same
    app.setWindowIcon(QIcon(str(resource_path("benchbay.svg"))))   # SVG: sharp at any scale
    # light or dark as the desktop says (BENCHBAY_THEME=light|dark overrides), also when it changes
    theme = ThemeFollower(app, resource_text("style.qss"), os.environ.get("BENCHBAY_THEME", "").strip().lower())
    install_excepthook()

    # Ctrl+C in the terminal: Python only sees the signal when the interpreter runs, so wake it up
    signal.signal(signal.SIGINT, lambda *_: app.quit())
    signal.signal(signal.SIGTERM, lambda *_: app.quit())   # `timeout`, a logout: close as Ctrl+C does
    wake = QTimer()
    wake.timeout.connect(lambda: None)
    wake.start(250)

    # the window first: the main window's code and the store load in a thread meanwhile
    from app.gui.start_window import StartWindow, load_in_thread

    start = StartWindow()
    start.show()
    state: dict[str, object] = {"code": None}

    def load() -> object:
        import app.gui.main_window  # noqa: F401 - the slow imports (charts, SSH, SQL), off the GUI thread

        return workbench_factory()

    def opened(workbench: object) -> None:
        from pyqtgraph.util.garbage_collector import GarbageCollector

        from app.gui.main_window import MainWindow

        state["collector"] = GarbageCollector(interval=1.0)   # imported with the charts, off the start's path
        state["workbench"] = workbench
        window = MainWindow(workbench)
        state["window"] = window
        if not restored(window):
            window.setGeometry(start.geometry())   # where the user already looks
        window.show()
        start.close()
        # the collector's full passes walk every object: 70-115 ms for the open window's 170,000 (modules, the
        # window itself), a stall each time. Once the window has settled, what exists lives as long as the app
        # and is set aside for good (gc.freeze); the passes then walk only what came later.
        QTimer.singleShot(SETTLE_MS, lambda: state.update(frozen=settle_heap()))

    def refused(exc: BaseException) -> None:
        if isinstance(exc, USER_ERRORS):
            QMessageBox.critical(start, "Benchbay cannot start", str(exc))
            state["code"] = 1
            start.close()
            app.exit(1)
            return
        start.close()
        raise exc

    load_in_thread(load, opened, refused, app)
    try:
        code = app.exec()
        return int(state["code"]) if state["code"] is not None else code
    finally:
        wake.stop()
        theme.deleteLater()
        window = state.get("window")
        if window is not None:
            window.shutdown()
            window.close()          # its timers (live charts, clocks) stop with it
            window.deleteLater()
        workbench = state.get("workbench")
        close = getattr(workbench, "close", None)
        if close is not None:
            close()
        collector = state.get("collector")
        if collector is not None:
            collector.timer.stop()
        if state.get("frozen"):
            gc.unfreeze()
        if collecting:
            gc.enable()   # the windows are closed: whatever runs in this process next collects as before


SETTLE_MS = 2000   # after the window's first paint and its Live tab


def settle_heap() -> bool:
    gc.collect()
    gc.freeze()
    return True


def restored(window: object) -> bool:
    """Whether the window took a saved geometry (window.ini) rather than the default one."""
    return bool(getattr(window, "geometry_restored", False))
