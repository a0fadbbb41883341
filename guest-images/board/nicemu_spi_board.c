// SPDX-License-Identifier: GPL-2.0
/*
 * nicemu_spi_board: the board description of nicemu's SPI Ethernet.
 *
 * nicemu's Xilinx XPS SPI core (devices/bus/xilinx_spi.c) is a PCI function
 * 10ee:7011: its registers are BAR0, its interrupt is INTA. A Micrel
 * KSZ8851SNL (devices/net/ks8851.c) sits on chip select 0; its INTRN pin
 * drives an ISA interrupt line of its own (level-triggered: nicemu's board
 * sets the line's ELCR bit).
 *
 * On a real board firmware (a device tree, ACPI) says this. Here this module
 * does: it claims the PCI function and registers the "xilinx_spi" platform
 * device with that BAR and IRQ, and with platform data that lists the KS8851,
 * which is the path drivers/mfd/timberdale.c uses for its FPGA's SPI core.
 * The stock spi-xilinx and ks8851 drivers then bind as they would on any
 * board; nothing here runs per packet.
 *
 * Parameters: ks8851_irq (default 7) must match nicemu's `--nic
 * ks8851,irq=`; spi_hz is the speed the SPI core passes on to the driver
 * (spi-xilinx ignores it: the core's SCLK is fixed, nicemu's `sclk=`).
 */
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/platform_device.h>
#include <linux/spi/spi.h>
#include <linux/spi/xilinx_spi.h>

static int ks8851_irq = 7;
module_param(ks8851_irq, int, 0444);
MODULE_PARM_DESC(ks8851_irq, "ISA IRQ of the KS8851's interrupt line (default 7)");

static unsigned int spi_hz = 25000000;
module_param(spi_hz, uint, 0444);
MODULE_PARM_DESC(spi_hz, "SPI clock of the KS8851 in Hz (default 25000000)");

static struct spi_board_info nicemu_spi_devices[] = {
	{
		.modalias = "ks8851",
		.chip_select = 0,
		.mode = SPI_MODE_0,
	},
};

static struct xspi_platform_data nicemu_xspi_pdata = {
	.num_chipselect = 1,
	.bits_per_word = 8,
	.devices = nicemu_spi_devices,
	.num_devices = ARRAY_SIZE(nicemu_spi_devices),
};

static int nicemu_spi_board_probe(struct pci_dev *pdev,
				  const struct pci_device_id *id)
{
	struct platform_device_info info = {
		.parent = &pdev->dev,
		.name = "xilinx_spi",
		.id = PLATFORM_DEVID_AUTO,
		.data = &nicemu_xspi_pdata,
		.size_data = sizeof(nicemu_xspi_pdata),
	};
	struct resource res[2];
	struct platform_device *spi;
	int ret;

	ret = pcim_enable_device(pdev);
	if (ret)
		return ret;
	if (!(pci_resource_flags(pdev, 0) & IORESOURCE_MEM))
		return -ENODEV;

	memset(res, 0, sizeof(res));
	res[0] = (struct resource)DEFINE_RES_MEM(pci_resource_start(pdev, 0),
						 pci_resource_len(pdev, 0));
	res[0].parent = &pdev->resource[0]; /* a child of the BAR */
	info.res = res;
	info.num_res = 1;
	/* The core's interrupt, if the card has its INTA pin wired. */
	if (pdev->pin && pdev->irq > 0) {
		res[1] = (struct resource)DEFINE_RES_IRQ(pdev->irq);
		info.num_res = 2;
	}

	nicemu_spi_devices[0].max_speed_hz = spi_hz;
	nicemu_spi_devices[0].irq = ks8851_irq;

	spi = platform_device_register_full(&info);
	if (IS_ERR(spi))
		return PTR_ERR(spi);
	pci_set_drvdata(pdev, spi);
	dev_info(&pdev->dev, "xilinx_spi with ks8851 on cs 0 (%u Hz, irq %d)\n",
		 spi_hz, ks8851_irq);
	return 0;
}

static void nicemu_spi_board_remove(struct pci_dev *pdev)
{
	platform_device_unregister(pci_get_drvdata(pdev));
}

static const struct pci_device_id nicemu_spi_board_ids[] = {
	{ PCI_DEVICE(PCI_VENDOR_ID_XILINX, 0x7011) },
	{ }
};
MODULE_DEVICE_TABLE(pci, nicemu_spi_board_ids);

static struct pci_driver nicemu_spi_board_driver = {
	.name = "nicemu_spi_board",
	.id_table = nicemu_spi_board_ids,
	.probe = nicemu_spi_board_probe,
	.remove = nicemu_spi_board_remove,
};
module_pci_driver(nicemu_spi_board_driver);

MODULE_DESCRIPTION("nicemu board: Xilinx SPI core on PCI 10ee:7011 with a KS8851");
MODULE_LICENSE("GPL");
