"""Live telemetry: the shell sampler run on the host, its raw output parsed, iostat -x figures computed."""
from remote.telemetry.compute import TelemetryComputer
from remote.telemetry.parse import Header, RawTickParser, Snapshot
from remote.telemetry.sample import SeriesLike, TelemetrySample, TelemetrySeries, samples_to_series, series_to_samples
from remote.telemetry.sampler import SAMPLER_FILE, sampler_script, start_command

__all__ = [
    "SAMPLER_FILE", "Header", "RawTickParser", "SeriesLike", "Snapshot", "TelemetryComputer", "TelemetrySample",
    "TelemetrySeries", "samples_to_series", "sampler_script", "series_to_samples", "start_command",
]
