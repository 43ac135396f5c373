"""CPU and memory facts from /proc/cpuinfo, /proc/meminfo and /sys/devices/system/cpu."""
import contextlib
import os
from typing import Dict, Iterable, List, Optional, Tuple

from .common import Collector, read_attr, read_int, read_text

CPU_SYSFS = "/sys/devices/system/cpu"

# Flags that change benchmark results (vector width, crypto/hash offload); x86 names then ARM names.
INTERESTING_FLAGS = (
    "sse4_2", "avx", "avx2", "avx512f", "avx512bw", "avx512vl", "avx512_vnni", "aes", "vaes",
    "sha_ni", "pclmulqdq", "rdrand", "bmi2", "hypervisor",
    "asimd", "sve", "sve2", "sha1", "sha2", "sha512", "pmull", "crc32", "atomics",
)
# Where the model name lives when "model name" is absent (ARM, MIPS, POWER, s390).
_MODEL_KEYS = ("model name", "Processor", "cpu model", "cpu", "Hardware")


def parse_cpuinfo(text: str) -> List[Dict[str, str]]:
    """One dict per block of /proc/cpuinfo (blank-line separated), keys and values stripped."""
    blocks = []  # type: List[Dict[str, str]]
    current = {}  # type: Dict[str, str]
    for line in text.splitlines():
        if not line.strip():
            if current:
                blocks.append(current)
                current = {}
            continue
        key, sep, value = line.partition(":")
        if sep:
            current.setdefault(key.strip(), value.strip())
    if current:
        blocks.append(current)
    return blocks


def summarize_topology(pairs: Iterable[Tuple[Optional[str], Optional[str]]], threads: int) -> Tuple[int, int]:
    """(sockets, physical cores) from (physical id, core id) per logical CPU.

    Without physical ids (many ARM and virtual machines) the honest answer is unknown: we say
    one socket and one core per thread rather than invent sharing we cannot see.
    """
    pairs = list(pairs)
    if not pairs or any(pkg is None for pkg, _ in pairs):
        return 1, max(threads, 1)
    sockets = len({pkg for pkg, _ in pairs})
    if any(core is None for _, core in pairs):
        return sockets, max(threads, 1)
    return sockets, len(set(pairs))


def cpu_from_cpuinfo(blocks: List[Dict[str, str]]) -> Dict[str, object]:
    """The pure part of the CPU facts: model, vendor, topology, current MHz, flags."""
    processors = [b for b in blocks if "processor" in b]
    threads = len(processors)
    first = processors[0] if processors else (blocks[0] if blocks else {})
    everything = {}  # type: Dict[str, str]
    for block in blocks:  # ARM puts "Hardware" in a trailing block without "processor"
        for key, value in block.items():
            everything.setdefault(key, value)
    model = None
    for key in _MODEL_KEYS:
        if first.get(key) or everything.get(key):
            model = first.get(key) or everything.get(key)
            break
    vendor = first.get("vendor_id") or everything.get("vendor_id") or everything.get("CPU implementer")
    pairs = [(p.get("physical id"), p.get("core id")) for p in processors]
    sockets, cores = summarize_topology(pairs, threads)
    mhz_values = []
    for proc in processors:
        with contextlib.suppress(KeyError, ValueError):
            mhz_values.append(float(proc["cpu MHz"]))
    flag_text = first.get("flags") or first.get("Features") or ""
    present = set(flag_text.split())
    return {
        "model": model,
        "vendor": vendor,
        "sockets": sockets,
        "cores": cores,
        "threads": threads,
        "mhz": round(sum(mhz_values) / len(mhz_values), 3) if mhz_values else None,
        "flags": [flag for flag in INTERESTING_FLAGS if flag in present],
    }


def _sysfs_topology(cpu_root: str) -> List[Tuple[Optional[str], Optional[str]]]:
    pairs = []
    for name in sorted(os.listdir(cpu_root)):
        if not (name.startswith("cpu") and name[3:].isdigit()):
            continue
        topo = os.path.join(cpu_root, name, "topology")
        pkg = read_attr(os.path.join(topo, "physical_package_id"))
        core = read_attr(os.path.join(topo, "core_id"))
        if pkg is None or pkg.startswith("-"):  # -1: the kernel does not know either
            return []
        pairs.append((pkg, core))
    return pairs


def gather_cpu(collector: Collector, cpuinfo_path: str = "/proc/cpuinfo",
               cpu_root: str = CPU_SYSFS) -> Dict[str, object]:
    blocks = parse_cpuinfo(read_text(cpuinfo_path) or "")
    cpu = cpu_from_cpuinfo(blocks)
    if not cpu["threads"]:
        cpu["threads"] = os.cpu_count() or 1
        cpu["sockets"], cpu["cores"] = 1, cpu["threads"]
    if not any("physical id" in b for b in blocks):
        pairs = collector.guard("cpu.topology", lambda: _sysfs_topology(cpu_root), [])
        if pairs and len(pairs) == cpu["threads"]:
            cpu["sockets"], cpu["cores"] = summarize_topology(pairs, cpu["threads"])
    cpufreq = os.path.join(cpu_root, "cpu0", "cpufreq")
    if cpu["mhz"] is None:
        cpu["mhz"] = collector.guard("cpu.mhz", lambda: _average_cur_khz(cpu_root))
    max_khz = read_int(os.path.join(cpufreq, "cpuinfo_max_freq"))
    cpu["max_mhz"] = max_khz / 1000.0 if max_khz else None
    cpu["governor"] = read_attr(os.path.join(cpufreq, "scaling_governor"))
    return cpu


def _average_cur_khz(cpu_root: str) -> Optional[float]:
    values = []
    for name in os.listdir(cpu_root):
        if name.startswith("cpu") and name[3:].isdigit():
            khz = read_int(os.path.join(cpu_root, name, "cpufreq", "scaling_cur_freq"))
            if khz:
                values.append(khz / 1000.0)
    return round(sum(values) / len(values), 3) if values else None


def parse_meminfo(text: str) -> Dict[str, int]:
    """/proc/meminfo as bytes (values in kB are multiplied by 1024; counts stay as they are)."""
    result = {}
    for line in text.splitlines():
        key, sep, rest = line.partition(":")
        fields = rest.split()
        if not sep or not fields:
            continue
        try:
            value = int(fields[0])
        except ValueError:
            continue
        result[key.strip()] = value * 1024 if len(fields) > 1 and fields[1] == "kB" else value
    return result


def memory_from_meminfo(info: Dict[str, int]) -> Dict[str, int]:
    available = info.get("MemAvailable")
    if available is None:  # kernels before 3.14: the classic estimate
        available = info.get("MemFree", 0) + info.get("Buffers", 0) + info.get("Cached", 0)
    return {
        "total_bytes": info["MemTotal"],
        "available_bytes": available,
        "swap_total_bytes": info.get("SwapTotal", 0),
        "swap_free_bytes": info.get("SwapFree", 0),
    }


def gather_memory(path: str = "/proc/meminfo") -> Dict[str, int]:
    text = read_text(path)
    if text is None:
        raise OSError("{} not found".format(path))
    return memory_from_meminfo(parse_meminfo(text))
