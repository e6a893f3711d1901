"""What the tool accepts at the limits of the guest address space, the hypervisor runs; one page
more is a tool error, never a hypervisor panic at boot."""

import subprocess

from harness import BUILD, CONFIGS, ROOT, check_stage2_pool, run_system

CROSS = "aarch64-linux-gnu-"
TOP_BASE = 0xFFE00000  # the last 2 MiB below 2^BH_IPA_BITS (4 GiB)


def link_hello_at(base: int, out):
    """hello (partitions/tests/hello, built by make) linked to run at guest address base."""
    lib = BUILD / "partitions" / "lib"
    out.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([f"{CROSS}gcc", f"-Wl,--defsym,PART_BASE={base:#x}", "-nostdlib", "-static", "-no-pie",
                    "-Wl,--build-id=none", "-Wl,--fatal-warnings", "-Wl,-z,max-page-size=4096",
                    f"-Wl,-T,{ROOT / 'partitions' / 'lib' / 'part.ld'}", "-o", str(out),
                    str(BUILD / "partitions" / "obj" / "tests" / "hello" / "main.o"),
                    str(lib / "libbhtest.a"), str(lib / "libbhpart.a"), "-lgcc"], check=True)


def test_partition_in_the_last_guest_megabytes_runs():
    link_hello_at(TOP_BASE, BUILD / "systest" / "hello_top_ipa.elf")
    run = run_system("tool_limits_top.yaml", until=lambda r: ("top", "hello_p0") in r.verdicts())
    assert run.verdicts().get(("top", "hello_p0"), ("missing",))[0] == "PASS", run.log
    assert run.count("panic|BH_CHECK|HM: partition") == 0, run.log
    check_stage2_pool("tool_limits_top.yaml", run.log)


def test_one_page_beyond_is_a_tool_error(tmp_path):
    """The area and the image one page higher: the area's last page is past 4 GiB, which stage 2
    cannot map (the hypervisor's BH_CHECK in stage2_map would halt the boot). The tool says so."""
    elf = BUILD / "systest" / "hello_beyond_ipa.elf"
    link_hello_at(TOP_BASE + 0x1000, elf)
    text = (CONFIGS / "tool_limits_top.yaml").read_text().replace("guest: 0xffe00000", "guest: 0xffe01000")
    config = tmp_path / "beyond.yaml"
    config.write_text(text.replace("../../../build/systest/hello_top_ipa.elf", str(elf)))
    done = subprocess.run([str(ROOT / ".venv" / "bin" / "bulkhead"), "check", str(config)], capture_output=True,
                          text=True)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (f"{config}:18:46: error: partition 'top' area 'ram': guest range 0xffe01000-0x100000fff "
                           "ends beyond the 32-bit guest address space (0x100000000); use a lower guest address\n")
