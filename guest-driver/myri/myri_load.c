// SPDX-License-Identifier: GPL-2.0
/*
 * Myrinet card driver: loading and starting the MCP, and the route table.
 *
 * A load holds the core in reset, takes every context away from its
 * files, checks the firmware image, waits for the fabric link, zeroes
 * SRAM, copies the image to SRAM 0, fills struct mcp_global and the
 * routes, releases the core and waits until the MCP says READY. Whatever
 * fails leaves the core in reset and says why in dmesg and in `state`.
 *
 * Part of the core, with myri_main.c (see there why the two call each
 * other). A stop and a load tell the contexts through dev->ctx_ops.
 */

#include <linux/crc32.h>
#include <linux/delay.h>
#include <linux/firmware.h>
#include <linux/jiffies.h>
#include <linux/kernel.h>
#include <linux/moduleparam.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <asm/unaligned.h>

#include "myri.h"

static unsigned int link_timeout_ms = 2000;
module_param(link_timeout_ms, uint, 0644);
MODULE_PARM_DESC(link_timeout_ms, "how long a load waits for the fabric link (ms, default 2000)");

static unsigned int ready_timeout_ms = 1000;
module_param(ready_timeout_ms, uint, 0644);
MODULE_PARM_DESC(ready_timeout_ms, "how long a started MCP may take to get READY (ms, default 1000)");

static int wdog_ms = -1;
module_param(wdog_ms, int, 0644);
MODULE_PARM_DESC(wdog_ms, "card watchdog: halt an MCP that runs this long without sleeping (ms, 0: off, -1: the card's default)");

/* RDP parameters for mcp_global.params; 0 lets the MCP choose */
static unsigned int mcp_params[MCP_PARAMS];
module_param_named(rto_us, mcp_params[MCP_P_RTO_US], uint, 0644);
MODULE_PARM_DESC(rto_us, "MCP: retransmit timeout, us (0: MCP default)");
module_param_named(window, mcp_params[MCP_P_WINDOW], uint, 0644);
MODULE_PARM_DESC(window, "MCP: packets in flight per peer (0: MCP default)");
module_param_named(mrc, mcp_params[MCP_P_MRC], uint, 0644);
MODULE_PARM_DESC(mrc, "MCP: retransmissions before a peer is dead (0: MCP default)");
module_param_named(ack_delay_us, mcp_params[MCP_P_ACK_DELAY_US], uint, 0644);
MODULE_PARM_DESC(ack_delay_us, "MCP: explicit ACK at the latest after, us (0: MCP default)");
module_param_named(ack_pending, mcp_params[MCP_P_ACK_PENDING], uint, 0644);
MODULE_PARM_DESC(ack_pending, "MCP: explicit ACK after this many packets (0: MCP default)");
module_param_named(cto_us, mcp_params[MCP_P_CTO_US], uint, 0644);
MODULE_PARM_DESC(cto_us, "MCP: pause after a capacity NACK, us (0: MCP default)");
module_param_named(refuse_us, mcp_params[MCP_P_REFUSE_US], uint, 0644);
MODULE_PARM_DESC(refuse_us, "MCP: sends to a destination that took nothing for this long fail when refused, us (0: MCP default)");

/*
 * Hold the core in reset, set @state and take every context away from
 * the card: from now on their SRAM pages are free for others, so their
 * mappings go (the contexts' card_stopped). Caller holds dev->lock.
 */
void myri_stop(struct myri_dev *dev, u32 state, const char *why)
{
	unsigned long flags;
	unsigned int i;

	lockdep_assert_held(&dev->lock);
	down_write(&dev->io_lock);
	if (!dev->gone)
		myri_cfg_wr(dev, LANAI_CFG_CONTROL,
			    LANAI_CTRL_RESET_ON | LANAI_CTRL_INT_DIS);
	spin_lock_irqsave(&dev->state_lock, flags);
	WRITE_ONCE(dev->state, state);
	strscpy(dev->reason, why, sizeof(dev->reason));
	spin_unlock_irqrestore(&dev->state_lock, flags);
	for (i = 0; i < MCP_MAX_CTX; i++)
		if (dev->ctx[i])
			dev->ctx[i]->stale = true;
	up_write(&dev->io_lock);
	dev->ctx_ops->card_stopped(dev);
	myri_wake_all(dev);
}

/* The header of myri/mcp.bin, in the words of myri_mcp_if.h. */
static int myri_check_image(struct myri_dev *dev, const struct firmware *fwf,
			    struct mcp_image_hdr *h)
{
	const u8 *image = fwf->data + sizeof(*h);
	const char *fname = dev->fw_name;
	u32 crc;
	int i;

	if (fwf->size < sizeof(*h)) {
		myri_set_down(dev, -EINVAL, "%s: %zu bytes, shorter than the image header",
			      fname, fwf->size);
		return -EINVAL;
	}
	/* little-endian on the card and in the file */
	h->magic = get_unaligned_le32(fwf->data + offsetof(typeof(*h), magic));
	h->abi = get_unaligned_le32(fwf->data + offsetof(typeof(*h), abi));
	h->load_size = get_unaligned_le32(fwf->data +
					  offsetof(typeof(*h), load_size));
	h->mem_end = get_unaligned_le32(fwf->data +
					offsetof(typeof(*h), mem_end));
	h->crc32 = get_unaligned_le32(fwf->data + offsetof(typeof(*h), crc32));
	memcpy(h->name, fwf->data + offsetof(typeof(*h), name), sizeof(h->name));
	h->name[sizeof(h->name) - 1] = 0;
	for (i = 0; h->name[i]; i++)
		if (h->name[i] < 0x20 || h->name[i] > 0x7e)
			h->name[i] = '?';

	if (h->magic != MCP_IMAGE_MAGIC) {
		myri_set_down(dev, -EINVAL, "%s: bad magic 0x%08x (want 0x%08x): not an MCP image",
			      fname, h->magic, MCP_IMAGE_MAGIC);
		return -EINVAL;
	}
	if (h->abi != MCP_ABI) {
		myri_set_down(dev, -EINVAL, "%s: MCP ABI %u, the driver speaks %u",
			      fname, h->abi, MCP_ABI);
		return -EINVAL;
	}
	if (h->load_size != fwf->size - sizeof(*h)) {
		myri_set_down(dev, -EINVAL, "%s: header says %u image bytes, the file has %zu",
			      fname, h->load_size, fwf->size - sizeof(*h));
		return -EINVAL;
	}
	if (!h->load_size || h->load_size > MCP_CODE_MAX ||
	    h->load_size > dev->sram_size) {
		myri_set_down(dev, -EINVAL,
			      "%s: image of %u bytes does not fit the code area (%u bytes)",
			      fname, h->load_size,
			      min_t(u32, MCP_CODE_MAX, dev->sram_size));
		return -EINVAL;
	}
	if (h->mem_end < h->load_size || h->mem_end > MCP_CODE_MAX) {
		myri_set_down(dev, -EINVAL, "%s: mem_end 0x%x outside the code area [0x%x, 0x%x]",
			      fname, h->mem_end, h->load_size, MCP_CODE_MAX);
		return -EINVAL;
	}
	/* zlib's crc32(): pre- and post-inverted, reflected 0xedb88320 */
	crc = crc32_le(~0u, image, h->load_size) ^ ~0u;
	if (crc != h->crc32) {
		myri_set_down(dev, -EINVAL,
			      "%s: bad CRC 0x%08x (header says 0x%08x): image corrupt",
			      fname, crc, h->crc32);
		return -EINVAL;
	}
	if (dev->sram_size <= MCP_CTX_AREA_OFF) {
		myri_set_down(dev, -EINVAL,
			      "SRAM of %u KiB leaves no room for contexts (need more than %u KiB)",
			      dev->sram_size / 1024, MCP_CTX_AREA_OFF / 1024);
		return -EINVAL;
	}
	return 0;
}

/* Wait for fabricd's HELLO_ACK, which tells the number of nodes. */
static int myri_link_wait(struct myri_dev *dev, u32 *nodes)
{
	unsigned int ms = READ_ONCE(link_timeout_ms);
	unsigned long deadline = jiffies + msecs_to_jiffies(ms);
	u32 link, n;

	for (;;) {
		link = myri_cfg_rd(dev, LANAI_CFG_LINK);
		if (link == ~0u) {
			myri_set_down(dev, -ENODEV, "card does not respond");
			return -ENODEV;
		}
		if (link & LANAI_LINK_REJECTED) {
			myri_set_down(dev, -ECONNREFUSED,
				      "fabric rejected node %u (see QEMU's log)",
				      dev->node);
			return -ECONNREFUSED;
		}
		if (link & LANAI_LINK_UP) {
			n = myri_cfg_rd(dev, LANAI_CFG_FABRIC_NODES);
			if (n)
				break;
		}
		if (time_after(jiffies, deadline)) {
			dev->link_retry = true;
			myri_set_down(dev, -ENOLINK,
				      "fabric link down after %u ms (link 0x%x); loading when it comes up",
				      ms, link);
			return -ENOLINK;
		}
		/* no interrupt for link-up; bounded wait */
		msleep(20);
	}
	if (n > MCP_MAX_NODES) {
		myri_set_down(dev, -EPROTO, "fabric of %u nodes, the MCP handles %u",
			      n, MCP_MAX_NODES);
		return -EPROTO;
	}
	if (dev->node >= n) {
		myri_set_down(dev, -EPROTO, "node %u is outside the fabric of %u nodes",
			      dev->node, n);
		return -EPROTO;
	}
	*nodes = n;
	return 0;
}

static void myri_route_write(struct myri_dev *dev, unsigned int n)
{
	void __iomem *p = dev->sram + MCP_ROUTES_OFF +
			  n * sizeof(struct mcp_route);
	const struct mcp_route *r = &dev->routes[n];

	memcpy_toio(p + offsetof(struct mcp_route, bytes), r->bytes,
		    sizeof(r->bytes));
	wmb();	/* the bytes before the length: the MCP reads len first */
	writeb(r->len, p + offsetof(struct mcp_route, len));
}

/* Caller holds dev->lock and io_lock; the card is not gone. */
void myri_routes_to_sram(struct myri_dev *dev)
{
	unsigned int n, ignored = 0;

	for (n = 0; n < MCP_MAX_NODES; n++) {
		if (n < dev->nodes)
			myri_route_write(dev, n);
		else if (dev->routes[n].len)
			ignored++;
	}
	if (ignored)
		dev_warn(&dev->pdev->dev, "%u route(s) for nodes beyond the fabric's %u ignored\n",
			 ignored, dev->nodes);
}

/* Start the MCP; io_lock held, the core in reset since myri_stop(). */
static int myri_start(struct myri_dev *dev, const struct firmware *fwf,
		      const struct mcp_image_hdr *h, u32 nodes)
{
	struct device *d = &dev->pdev->dev;
	unsigned long deadline, flags;
	u32 st, core, i;
	int wdog = READ_ONCE(wdog_ms);

	memset_io(dev->sram, 0, dev->sram_size);
	memcpy_toio(dev->sram, fwf->data + sizeof(*h), h->load_size);

	myri_sram_wr(dev, MYRI_G(magic), MCP_MAGIC);
	myri_sram_wr(dev, MYRI_G(abi), MCP_ABI);
	myri_sram_wr(dev, MYRI_G(node), dev->node);
	myri_sram_wr(dev, MYRI_G(nodes), nodes);
	myri_sram_wr(dev, MYRI_G(nonce), get_random_u32());
	myri_sram_wr(dev, MYRI_G(sram_size), dev->sram_size);
	for (i = 0; i < MCP_PARAMS; i++)
		myri_sram_wr(dev, MYRI_G(params) + 4 * i,
			     READ_ONCE(mcp_params[i]));
	dev->nodes = nodes;
	dev->cmd_seq = 0;
	myri_routes_to_sram(dev);
	strscpy(dev->mcp_name, h->name, sizeof(dev->mcp_name));

	if (wdog >= 0)
		myri_cfg_wr(dev, LANAI_CFG_WDOG_MS, wdog);
	/* the core's reset cleared EIMR; set it before the core runs */
	myri_reg_wr(dev, LANAI_REG_EIMR, MYRI_EIMR);
	myri_reg_wr(dev, LANAI_REG_ISR, MYRI_EIMR);
	wmb();	/* SRAM contents (WC buffers drained) before the start */
	myri_cfg_wr(dev, LANAI_CFG_CONTROL,
		    LANAI_CTRL_RESET_OFF | LANAI_CTRL_INT_EN);

	deadline = jiffies + msecs_to_jiffies(READ_ONCE(ready_timeout_ms));
	for (;;) {
		if (myri_state(dev) != MYRI_STATE_LOADING)
			return -EIO;	/* the interrupt saw it halt */
		st = myri_sram_rd(dev, MYRI_G(state));
		if (st == MCP_STATE_READY)
			break;
		core = myri_cfg_rd(dev, LANAI_CFG_CORE_STATE);
		if (core == LANAI_CORE_HALT) {
			myri_halted(dev);
			return -EIO;
		}
		if (st == MCP_STATE_PANIC) {
			st = myri_sram_rd(dev, MYRI_G(panic_code));
			myri_die(dev, true, "MCP panic at start: %s (code %u, arg 0x%08x)",
				 myri_panic_name(st), st,
				 myri_sram_rd(dev, MYRI_G(panic_arg)));
			return -EIO;
		}
		if (time_after(jiffies, deadline)) {
			myri_die(dev, true,
				 "MCP not READY after %u ms (mcp state %u, core state %u)",
				 ready_timeout_ms, st, core);
			return -ETIMEDOUT;
		}
		usleep_range(500, 1000);
	}

	dev->hb_last = myri_sram_rd(dev, MYRI_G(heartbeat));
	dev->hb_jiffies = jiffies;
	spin_lock_irqsave(&dev->state_lock, flags);
	if (dev->state != MYRI_STATE_LOADING) {
		spin_unlock_irqrestore(&dev->state_lock, flags);
		return -EIO;
	}
	WRITE_ONCE(dev->state, MYRI_STATE_UP);
	dev->reason[0] = 0;
	dev->halt_cause = LANAI_HALT_NONE;
	spin_unlock_irqrestore(&dev->state_lock, flags);
	dev->down_err = 0;
	dev_info(d, "MCP \"%s\" from %s running: node %u of %u, %u bytes\n",
		 dev->mcp_name, dev->fw_name, dev->node, nodes, h->load_size);
	return 0;
}

/*
 * (Re)load the MCP and open the HAL's context. Open contexts are lost
 * (their files get ENODEV and SIGBUS on their card mappings). Caller
 * holds dev->lock. Returns 0, or an error with the card down or dead and
 * the reason in `state`.
 */
int myri_load(struct myri_dev *dev)
{
	const struct firmware *fwf;
	struct mcp_image_hdr h;
	u32 nodes;
	int ret;

	lockdep_assert_held(&dev->lock);
	if (myri_state(dev) == MYRI_STATE_REMOVED)
		return -ENODEV;
	myri_stop(dev, MYRI_STATE_LOADING, "loading");
	dev->load_jiffies = jiffies;
	dev->link_retry = false;
	dev->mcp_name[0] = 0;
	myri_count(dev, MYRI_CNT_LOADS);

	ret = request_firmware(&fwf, dev->fw_name, &dev->pdev->dev);
	if (ret) {
		myri_set_down(dev, ret, "cannot load firmware %s (error %d)",
			      dev->fw_name, ret);
		myri_count(dev, MYRI_CNT_LOAD_ERRORS);
		return ret;
	}
	down_read(&dev->io_lock);
	if (dev->gone) {
		ret = -ENODEV;
		goto out;
	}
	ret = myri_check_image(dev, fwf, &h);
	if (!ret)
		ret = myri_link_wait(dev, &nodes);
	if (!ret)
		ret = myri_start(dev, fwf, &h, nodes);
out:
	up_read(&dev->io_lock);
	release_firmware(fwf);
	if (ret) {
		myri_count(dev, MYRI_CNT_LOAD_ERRORS);
		return ret;
	}
	dev->ctx_ops->card_up(dev);
	return 0;
}

/*
 * sysfs `routes`: lines "NODE HEX", the route bytes to NODE in hex (1 to
 * LANAI_MAX_ROUTE bytes, each with bit 7 set); "NODE" alone clears it.
 * All lines are checked before any is taken. Running MCPs see the new
 * routes at once.
 */
int myri_routes_parse(struct myri_dev *dev, const char *buf, size_t count)
{
	struct device *d = &dev->pdev->dev;
	DECLARE_BITMAP(seen, MCP_MAX_NODES);
	struct mcp_route *tbl;
	char *copy, *s, *line, *tok;
	unsigned int lineno = 0, n, i;
	size_t len;
	int ret = -EINVAL;

	bitmap_zero(seen, MCP_MAX_NODES);
	copy = kstrndup(buf, count, GFP_KERNEL);
	tbl = kcalloc(MCP_MAX_NODES, sizeof(*tbl), GFP_KERNEL);
	if (!copy || !tbl) {
		ret = -ENOMEM;
		goto out;
	}
	s = copy;
	while ((line = strsep(&s, "\n"))) {
		lineno++;
		line = strim(line);
		if (!*line)
			continue;
		tok = strsep(&line, " \t");
		line = line ? strim(line) : "";
		if (kstrtouint(tok, 10, &n) || n >= MCP_MAX_NODES) {
			dev_warn(d, "routes line %u: node '%s' is not a number below %u\n",
				 lineno, tok, MCP_MAX_NODES);
			goto out;
		}
		len = strlen(line);
		if (len % 2 || len / 2 > LANAI_MAX_ROUTE) {
			dev_warn(d, "routes line %u: want up to %u route bytes in hex, not '%s'\n",
				 lineno, LANAI_MAX_ROUTE, line);
			goto out;
		}
		if (hex2bin(tbl[n].bytes, line, len / 2)) {
			dev_warn(d, "routes line %u: '%s' is not hex\n", lineno,
				 line);
			goto out;
		}
		for (i = 0; i < len / 2; i++)
			if (!(tbl[n].bytes[i] & LANAI_ROUTE_BIT)) {
				dev_warn(d, "routes line %u: byte 0x%02x has no route bit (0x80)\n",
					 lineno, tbl[n].bytes[i]);
				goto out;
			}
		tbl[n].len = len / 2;
		set_bit(n, seen);
	}

	mutex_lock(&dev->lock);
	if (dev->nodes) {
		n = find_next_bit(seen, MCP_MAX_NODES, dev->nodes);
		if (n < MCP_MAX_NODES) {
			dev_warn(d, "routes: node %u is outside the fabric of %u nodes\n",
				 n, dev->nodes);
			mutex_unlock(&dev->lock);
			goto out;
		}
	}
	for_each_set_bit(n, seen, MCP_MAX_NODES)
		dev->routes[n] = tbl[n];
	down_read(&dev->io_lock);
	if (!dev->gone && myri_state(dev) == MYRI_STATE_UP)
		for_each_set_bit(n, seen, MCP_MAX_NODES)
			myri_route_write(dev, n);
	up_read(&dev->io_lock);
	mutex_unlock(&dev->lock);
	ret = 0;
out:
	kfree(tbl);
	kfree(copy);
	return ret;
}
