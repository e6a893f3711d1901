"""DMA devices in a partition with a board (docs/configuration.md, `board:`).

A device passed through whole does DMA to the addresses its driver gives it: guest physical
addresses, since nothing (no IOMMU on qemu-virt) translates them. The device writes them as
physical addresses, so a partition that passes one through needs each of its normal areas
identity mapped (guest = phys); a board partition's RAM is then at the board's RAM base in
physical memory too, where the hypervisor memory usually is (hypervisor.memory.base moves it).
"""

from __future__ import annotations

from bulkhead.diagnostics import Diagnostics
from bulkhead.model import Partition
from bulkhead.units import hexa

DMA_KINDS = ("virtio-mmio",)  # devices that read and write memory on their own


def dma_device(part: Partition):
    """The first device of part that does DMA, or None."""
    return next((device for device in part.devices if device.kind in DMA_KINDS), None)


def check_identity(part: Partition, board_name: str, diags: Diagnostics) -> None:
    """Every normal area of a board partition with a DMA device is identity mapped."""
    device = dma_device(part)
    if device is None:
        return
    for area in part.areas:
        if area.kind != "normal" or not area.placed or area.guest == area.phys:
            continue
        diags.error(area.at("phys"), f"{part.title} {area.title}: phys {hexa(area.phys)} differs from guest "
                    f"{hexa(area.guest)}, but {device.text} (line {device.pos.line}) does DMA to guest physical "
                    f"addresses, so every normal area of a partition with board '{board_name}' and a DMA device "
                    f"must be identity mapped; set 'phys: {hexa(area.guest)}' (move the hypervisor memory, "
                    f"hypervisor.memory.base, or other areas out of the way), or remove {device.text}")
