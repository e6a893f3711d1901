"""Command line: bulkhead check | build | qemu | plan | analyse | trace."""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
from pathlib import Path

from bulkhead import abi, chrome, config, firmware, plan, rta, timeline, trace
from bulkhead.build import BuildOptions, build
from bulkhead.diagnostics import ConfigError
from bulkhead.disk import missing_disks
from bulkhead.qemu import FlashWriteBack, bare_linux_command, qemu_command
from bulkhead.toolchain import ToolError
from bulkhead.units import hexa


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bulkhead", description="Bulkhead system description tool")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    check = commands.add_parser("check", help="validate a system description")
    check.add_argument("config", metavar="CONFIG")
    make = commands.add_parser("build", help="validate and pack the boot image")
    make.add_argument("config", metavar="CONFIG")
    make.add_argument("--out", required=True, type=Path, metavar="DIR", help="output directory")
    make.add_argument("--hyp-lib", required=True, type=Path, metavar="LIB", help="hypervisor archive (.a)")
    make.add_argument("--linker-script", required=True, type=Path, metavar="LD", help="hypervisor linker script")
    make.add_argument("--include", required=True, type=Path, action="append", metavar="INCDIR",
                      help="directory with config_tables.h (repeatable)")
    make.add_argument("--cross", default="aarch64-linux-gnu-", metavar="PREFIX", help="toolchain prefix")
    run = commands.add_parser("qemu", help="boot a packed image in QEMU")
    run.add_argument("config", metavar="CONFIG")
    run.add_argument("--image", required=True, metavar="IMG", help="the packed image (bulkhead.img)")
    run.add_argument("--icount", action="store_true", help="deterministic run (instruction counting)")
    run.add_argument("--print", action="store_true", help="print the command instead of running it")
    bare = commands.add_parser("bare", help="boot a Linux partition's kernel and initramfs in QEMU without Bulkhead")
    bare.add_argument("config", metavar="CONFIG")
    bare.add_argument("--partition", required=True, metavar="NAME", help="the Linux partition")
    bare.add_argument("--out", required=True, type=Path, metavar="DIR", help="where to write the initramfs")
    bare.add_argument("--icount", action="store_true", help="deterministic run (instruction counting)")
    bare.add_argument("--print", action="store_true", help="print the command instead of running it")
    show = commands.add_parser("plan", help="show a cyclic plan as text, a picture or trace JSON")
    show.add_argument("config", metavar="CONFIG")
    show.add_argument("--plan", metavar="NAME", help="the plan to show (default: the initial plan)")
    show.add_argument("--png", type=Path, metavar="OUT.png", help="draw the plan into a PNG picture")
    show.add_argument("--json", type=Path, metavar="OUT.json", help="write the plan as Chrome/Perfetto trace JSON")
    show.add_argument("--frames", type=_positive, default=1, metavar="N", help="major frames to show (default 1)")
    analyse = commands.add_parser("analyse", help="response times of APEX processes against their deadlines")
    analyse.add_argument("config", metavar="CONFIG")
    analyse.add_argument("--json", type=Path, metavar="OUT.json", help="also write the verdicts as JSON")
    events = commands.add_parser("trace", help="turn BHTRACE lines of a console log into trace JSON or a picture")
    events.add_argument("log", metavar="LOG", help="console log file, or - for standard input")
    events.add_argument("--config", metavar="CONFIG", help="the system's configuration, for partition and plan names")
    events.add_argument("--json", type=Path, metavar="OUT.json", help="write Chrome/Perfetto trace JSON")
    events.add_argument("--png", type=Path, metavar="OUT.png", help="draw a timeline into a PNG picture")
    return parser


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"'{text}' is not a positive integer")
    return int(text)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    handler = {"check": _check, "build": _build, "qemu": _qemu, "bare": _bare, "plan": _plan,
               "analyse": _analyse, "trace": _trace}[args.command]
    try:
        return handler(args)
    except ConfigError as exc:
        print("\n".join(exc.messages), file=sys.stderr)
        return 1
    except ToolError as exc:
        print(f"bulkhead: error: {exc}", file=sys.stderr)
        return 1


def _check(args: argparse.Namespace) -> int:
    system = config.load(args.config)
    print(f"{args.config}: ok ({len(system.partitions)} partitions)")
    return 0


def _build(args: argparse.Namespace) -> int:
    _require_limits_differing(args.include)
    system = config.load(args.config)
    opts = BuildOptions(args.out, args.hyp_lib, args.linker_script, tuple(args.include), args.cross)
    result = build(system, args.config, opts)
    print(f"bulkhead: {result.image} ({result.image_size} bytes, ends at {hexa(result.image_end)}): "
          f"{len(system.partitions)} partitions, {result.segment_count} segments; run: {result.qemu_cmd}")
    for name, outputs in result.linux.items():
        part = system.partition_named(name)
        board = part.board if part is not None else None
        linux = part is not None and part.linux is not None
        kind = f"partition '{name}' (board {board})" if board else ("Linux " if linux else "") + f"partition '{name}'"
        print(f"bulkhead: {kind}: " + ", ".join(str(path) for path in outputs.values()))
    return 0


def _require_limits_differing(include_dirs: list[str]) -> None:
    """The tables are compiled against --include's config_tables.h: its limits must be the ones the
    description was checked against, or the hypervisor could reject at boot what the tool accepted."""
    for directory in map(Path, include_dirs):
        if not (directory / "config_tables.h").is_file():
            continue
        differ = abi.limits_differing(directory)
        if differ:
            raise ToolError(f"{directory / 'config_tables.h'} has other limits than {abi.CONFIG_HEADER}, which "
                            f"the tool checks descriptions against ({'; '.join(differ)}); build with the "
                            f"hypervisor headers of this tool's source tree, or run the tool from that tree")


def _qemu(args: argparse.Namespace) -> int:
    system = config.load(args.config)
    if not args.print:
        missing = missing_disks(system, Path(args.image).parent)
        if missing:
            raise ToolError(f"{missing[0]} does not exist: `bulkhead build` writes a partition's disk beside the "
                            f"image; build {args.config} into {Path(args.image).parent}")
    argv = qemu_command(system, args.image, icount=args.icount)
    if args.print or not firmware.write_backs(system):
        return _run_qemu(argv, args.print)
    return _run_qemu_writing_back(argv, FlashWriteBack(system, args.image))


def _bare(args: argparse.Namespace) -> int:
    system = config.load(args.config)
    try:
        argv = bare_linux_command(system, args.partition, args.out, icount=args.icount)
    except ValueError as exc:
        raise ToolError(str(exc)) from exc
    return _run_qemu(argv, args.print)


def _run_qemu_writing_back(argv: list[str], flash: FlashWriteBack) -> int:
    """QEMU as a child, so the flash banks are written back when the system powers off."""
    try:
        proc = subprocess.Popen(argv)
    except OSError as exc:
        raise ToolError(f"cannot run {argv[0]}: {exc.strerror}") from exc
    flash.connect()
    flash.watch()
    return proc.wait()


def _run_qemu(argv: list[str], print_only: bool) -> int:
    if print_only:
        print(shlex.join(argv))
        return 0
    sys.stdout.flush()
    try:
        os.execvp(argv[0], argv)
    except OSError as exc:
        raise ToolError(f"cannot run {argv[0]}: {exc.strerror}") from exc
    return 1


def _plan(args: argparse.Namespace) -> int:
    system = config.load(args.config, images=False)
    chosen = plan.choose_plan(system, args.plan)
    what = f"plan '{chosen.name}'" if chosen else "cores (no plans)"
    if args.png:
        timeline.save(plan.timeline(system, chosen, args.frames), args.png)
        print(f"bulkhead: {args.png}: {what}")
    if args.json:
        chrome.write(args.json, plan.trace_events(system, chosen, args.frames))
        print(f"bulkhead: {args.json}: {what}")
    if not (args.png or args.json):
        print("\n".join(plan.describe(system, chosen)))
    return 0


def _analyse(args: argparse.Namespace) -> int:
    system = config.load(args.config, images=False)
    analyses = rta.analyse(system)
    print("\n".join(rta.describe(analyses)))
    if args.json:
        rta.write_json(analyses, args.json)
        print(f"bulkhead: {args.json}: {sum(len(a.processes) for a in analyses)} processes")
    return 0


def _trace(args: argparse.Namespace) -> int:
    system = config.load(args.config, images=False) if args.config else None
    data = trace.read(args.log)
    if args.json:
        trace.write_json(data, system, args.json)
        print(f"bulkhead: {args.json}: {data.count} events")
    if args.png:
        timeline.save(trace.timeline(data, system), args.png)
        print(f"bulkhead: {args.png}: {data.count} events")
    if not (args.json or args.png):
        print("\n".join(trace.summary(data, system)))
    return 0
