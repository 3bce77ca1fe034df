// A reviewer in Debian's Chromium, driven by playwright-core (tests/serve.rs runs this):
// signs in with their token, waits for the escalation to appear in the queue, opens it and
// allows it once. Screenshots of the queue and of the escalation (desktop and phone width)
// go to SCREENSHOTS. Prints one JSON line: what it saw.
//
//   node review.mjs URL REVIEWER_TOKEN SCREENSHOTS
import { chromium } from "playwright-core";

const [url, token, shots] = process.argv.slice(2);
if (!url || !token || !shots) {
  console.error("usage: node review.mjs URL REVIEWER_TOKEN SCREENSHOTS");
  process.exit(2);
}

const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium",
  args: [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
  ],
});
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
  await page.goto(`${url}/queue`);
  // Not signed in: the queue sends us to the login page.
  if (!page.url().endsWith("/login")) throw new Error(`expected the login page, got ${page.url()}`);
  await page.fill("#token", token);
  await Promise.all([page.waitForURL(/\/queue$/), page.click("button[type=submit]")]);

  // The escalation arrives while the gated run waits.
  const deadline = Date.now() + 60_000;
  while ((await page.locator(".queue .item").count()) === 0) {
    if (Date.now() > deadline) throw new Error("no escalation appeared in the queue");
    await page.waitForTimeout(250);
    await page.reload();
  }
  const subject = (await page.locator(".queue .item .subject").first().textContent()).trim();
  await page.screenshot({ path: `${shots}/review-queue.png` });

  await Promise.all([page.waitForURL(/\/escalations\//), page.locator(".queue .item a.cover").first().click()]);
  const id = page.url().split("/").pop();
  const reasons = await page.locator(".reasons li").allTextContents();
  await page.screenshot({ path: `${shots}/review-escalation.png`, fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: `${shots}/review-escalation-phone.png`, fullPage: true });
  await page.setViewportSize({ width: 1280, height: 860 });

  await Promise.all([page.waitForLoadState("load"), page.click("button[value=allow]")]);
  await page.waitForSelector(".decided-allowed");
  const decided = (await page.locator(".decided h2").textContent()).trim();
  await page.screenshot({ path: `${shots}/review-decided.png` });
  console.log(JSON.stringify({ id, subject, reasons, decided }));
} finally {
  await browser.close();
}
