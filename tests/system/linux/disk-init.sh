#!/bin/sh
# /init of the linux_disk system test (tests/system/configs/linux_disk.yaml): mounts the FAT disk the
# tool built (virtio-blk in the passed-through virtio-mmio slot 30) and prints what it holds, then
# powers the partition off.
/bin/busybox --install -s
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
for module in virtio_mmio virtio_blk vfat nls_cp437 nls_ascii; do
	modprobe "$module" || echo "BHDISK modprobe $module failed"
done
mkdir -p /mnt
if mount -t vfat -o ro /dev/vda /mnt; then
	# The FAT12/16 boot sector's volume label (offset 43) and file system type (offset 54).
	echo "BHDISK label $(dd if=/dev/vda bs=1 skip=43 count=11 2>/dev/null)"
	echo "BHDISK type $(dd if=/dev/vda bs=1 skip=54 count=8 2>/dev/null)"
	echo "BHDISK hello $(cat /mnt/hello.txt)"
	echo "BHDISK md5 $(md5sum /mnt/EFI/BOOT/BOOTAA64.EFI | cut -d' ' -f1)"
	echo "BHDISK files $(cd /mnt && find . -type f | sort | tr '\n' ' ')"
else
	echo "BHDISK mount failed"
fi
echo "BHDISK done"
poweroff -f
