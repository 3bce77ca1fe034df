// Every page of the review service in Debian's Chromium, driven by playwright-core
// (tests/serve.rs runs this). On a service with nothing in it and on one holding escalations
// in every state, it draws each page at a desktop's width and at a phone's (390 px): each must
// answer as expected, fit the width without scrolling sideways (the document is no wider than
// the window) and show no hidden character as it is; a screenshot of each goes to SHOTS. On
// the second service it also watches the queue update itself when an escalation arrives (the
// tab's title carries the count), then allows the escalation of a waiting `acp-gate run` on
// its page. Then it finds: a search with results and one with none, the history's second
// page, the audit over a time range and the calls behind one of its counts, a hostile search
// said back as the page shows text; it checks that times are written in the reader's zone
// (the browser's is set to Asia/Kolkata) and decides an escalation with the `d` key (not
// while typing a message); an admin replays the audit under the proposed rules on the policy
// page; the fleet page lists the gates that reported, flagged ones first. Prints one JSON
// line: what it saw.
//
//   node review.mjs CONFIG
//   CONFIG (JSON): {"shots": DIR, "empty": {"url", "reviewer"},
//                   "full": {"url", "reviewer", "admin", "gate", "states": {STATE: [ID]}, "run": SUBJECT,
//                            "arrive": SUBMISSION, "today": "YYYY-MM-DD"}}
import { chromium } from "playwright-core";

const config = JSON.parse(process.argv[2] ?? "null");
if (!config) {
  console.error("usage: node review.mjs CONFIG_JSON");
  process.exit(2);
}
const { shots, empty, full } = config;
const DESKTOP = { width: 1280, height: 860 };
const PHONE = { width: 390, height: 844 };
// The characters the page must never draw as they are (serve/visible.rs hides more).
const HIDDEN = /[\u00AD\u061C\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF]/u;

const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium",
  args: [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
  ],
});
let drawn = 0;

/// Signs in with `token` on a new page of the service at `url` (a reader in India: times are
/// written in their zone).
async function signIn(url, token) {
  const page = await browser.newPage({ viewport: DESKTOP, timezoneId: "Asia/Kolkata", locale: "en-GB" });
  await page.goto(`${url}/queue`);
  // Not signed in: the queue sends us to the sign-in page.
  if (!page.url().endsWith("/login")) throw new Error(`expected the sign-in page, got ${page.url()}`);
  await page.fill("#token", token);
  await Promise.all([page.waitForURL(/\/queue$/), page.click("button[type=submit]")]);
  return page;
}

/// Draws `path` at both widths: it answers `status`, fits, hides nothing; screenshots `name`.
async function draw(page, url, path, name, status = 200) {
  for (const [viewport, width] of [[DESKTOP, "desktop"], [PHONE, "phone"]]) {
    await page.setViewportSize(viewport);
    const response = await page.goto(`${url}${path}`);
    if (response.status() !== status) {
      throw new Error(`${path} answered ${response.status()}, not ${status}`);
    }
    const seen = await page.evaluate(() => ({
      wide: document.documentElement.scrollWidth,
      window: document.documentElement.clientWidth,
      text: document.body.innerText,
    }));
    if (seen.wide > seen.window) {
      throw new Error(`${path} at ${viewport.width} px is ${seen.wide} px wide: it scrolls sideways`);
    }
    if (HIDDEN.test(seen.text)) throw new Error(`${path} draws a hidden character as it is`);
    await page.screenshot({ path: `${shots}/${name}-${width}.png`, fullPage: true });
    drawn += 1;
  }
}

/// Every page of a service: the queue, the history, the audit, the policy page, the fleet, the page of each escalation of
/// `states` and of one that does not exist.
async function drawAll(page, url, label, states = {}) {
  await draw(page, url, "/queue", `${label}-queue`);
  await draw(page, url, "/history", `${label}-history`);
  await draw(page, url, "/audit", `${label}-audit`);
  await draw(page, url, "/policy", `${label}-policy`);
  await draw(page, url, "/fleet", `${label}-fleet`);
  for (const [state, ids] of Object.entries(states)) {
    for (const id of ids) await draw(page, url, `/escalations/${id}`, `${label}-${state}-${id}`);
  }
  await draw(page, url, "/escalations/esc-missing", `${label}-not-found`, 404);
}

try {
  // The sign-in page, at both widths.
  const signedOut = await browser.newPage({ viewport: DESKTOP });
  await draw(signedOut, empty.url, "/login", "login");
  await signedOut.close();

  // A service with nothing in it.
  const quiet = await signIn(empty.url, empty.reviewer);
  await drawAll(quiet, empty.url, "empty");
  await quiet.close();

  // A service holding every state; the run's escalation arrives while the run waits.
  const page = await signIn(full.url, full.reviewer);
  const item = (subject) => page.locator(".queue .item", { hasText: subject });
  const deadline = Date.now() + 60_000;
  while ((await item(full.run).count()) === 0) {
    if (Date.now() > deadline) throw new Error("the run's escalation did not appear in the queue");
    await page.waitForTimeout(250);
    await page.reload();
  }
  const subject = (await item(full.run).locator(".subject").textContent()).trim();

  // An escalation arrives while the queue is open: the page updates itself, and the title's
  // count goes up, with no reload from here.
  const before = await page.title();
  const counted = Number(before.match(/^\((\d+)\) /)?.[1] ?? 0);
  const arrived = await fetch(`${full.url}/v1/escalations`, {
    method: "POST",
    headers: { authorization: `Bearer ${full.gate}`, "content-type": "application/json" },
    body: JSON.stringify(full.arrive),
  });
  if (arrived.status !== 201) throw new Error(`submitting: ${arrived.status} ${await arrived.text()}`);
  await page.waitForFunction((n) => document.title.startsWith(`(${n}) `), counted + 1, { timeout: 20_000 });
  await item(full.arrive.subject).waitFor({ timeout: 20_000 });
  const after = await page.title();
  await page.screenshot({ path: `${shots}/full-queue-updated-desktop.png`, fullPage: true });
  const deny = await fetch(`${full.url}/v1/escalations/${full.arrive.id}/decision`, {
    method: "POST",
    headers: { authorization: `Bearer ${full.reviewer}`, "content-type": "application/json" },
    body: JSON.stringify({ choice: "deny", message: "seen: the queue updated itself" }),
  });
  if (deny.status !== 200) throw new Error(`denying: ${deny.status} ${await deny.text()}`);

  // The reviewer allows the run's request on its page.
  await page.reload();
  await Promise.all([page.waitForURL(/\/escalations\//), item(full.run).locator("a.cover").click()]);
  const id = page.url().split("/").pop();
  const reasons = await page.locator(".reasons li").allTextContents();
  await Promise.all([page.waitForLoadState("load"), page.click("button[value=allow]")]);
  await page.waitForSelector(".decided-allowed");
  const decided = (await page.locator(".decided h2").textContent()).trim();

  // Then every page, with the run's escalation decided too.
  const states = { ...full.states, run: [id], arrived: [full.arrive.id] };
  await drawAll(page, full.url, "full", states);
  const hostile = await page.goto(`${full.url}/escalations/${full.states.waiting[0]}`);
  const flagged = await page.locator(".alert", { hasText: "holds hidden characters" }).count();
  const escapes = await page.locator(".subject .hidden").allTextContents();
  if (hostile.status() !== 200 || flagged !== 1 || !escapes.includes("⟨U+202E⟩")) {
    throw new Error(`the hostile request is not shown as it runs: ${flagged} flag(s), ${escapes}`);
  }

  // The fleet: the gates' problems, flagged ones first.
  await page.goto(`${full.url}/fleet`);
  const fleet = {
    gates: await page.locator(".gate-report h2 code").allTextContents(),
    flags: await page.locator(".gate-report .flag").allTextContents(),
    totals: (await page.locator(".totals").innerText()).replace(/\s+/g, " ").trim(),
  };

  // Finding.
  const hostileQuery = encodeURIComponent("rm \u202Ehs.txt\u200B \"><script>alert(1)</script>");
  const finds = [
    ["/queue?q=terraform", "find-queue-search"],
    ["/queue?q=nothing-is-asked-like-this", "find-queue-none"],
    ["/history?page=2", "find-history-page-2"],
    ["/history?decision=denied&q=lint", "find-history-denied"],
    [`/audit?from=${full.today}`, "find-audit-range"],
    [`/audit/records?decision=denied&from=${full.today}`, "find-audit-records"],
    [`/queue?q=${hostileQuery}`, "find-hostile-search"],
  ];
  for (const [path, name] of finds) await draw(page, full.url, path, name);
  const text = async (selector) => (await page.locator(selector).allTextContents()).map((t) => t.trim());
  await page.goto(`${full.url}/queue?q=terraform`);
  const searched = await text(".queue .item .subject");
  if (searched.length === 0 || !searched.every((s) => s.toLowerCase().includes("terraform"))) {
    throw new Error(`searching for terraform found ${JSON.stringify(searched)}`);
  }
  await page.goto(`${full.url}/queue?q=nothing-is-asked-like-this`);
  const none = (await text(".card.empty")).join(" ");
  await page.goto(`${full.url}/history?page=2`);
  const second = (await text(".pager .muted")).join(" ");
  await page.goto(`${full.url}/audit?from=${full.today}`);
  await Promise.all([page.waitForURL(/\/audit\/records/), page.locator(".totals a.deny").click()]);
  const outcomes = [...new Set(await text(".records tbody .status"))];
  await page.goto(`${full.url}/queue?q=${hostileQuery}`);
  const said = await text(".found .query .hidden");
  const kept = await page.inputValue("input[name=q]");
  const scripts = await page.locator("main script").count();
  if (!said.includes("⟨U+202E⟩") || !kept.includes("⟨U+202E⟩") || scripts !== 0) {
    throw new Error(`the hostile search is not said back as text: ${said} / ${kept} / ${scripts} script(s)`);
  }

  // Times in the reader's zone, UTC on hover.
  await page.goto(`${full.url}/escalations/${full.states.decided[0]}`);
  const times = await page.locator("time[data-local]:not(.ago)").evaluateAll((all) =>
    all.map((t) => ({ text: t.textContent, title: t.title, datetime: t.dateTime })));
  const local = times[0];
  if (!local || local.text.includes("UTC") || !local.title.endsWith("UTC")) {
    throw new Error(`times are not in the reader's zone: ${JSON.stringify(times)}`);
  }

  // Keys: `d` while typing a message is a letter of it; then, outside it, a deny.
  const open = full.states.stale[1];
  await page.goto(`${full.url}/escalations/${open}`);
  await page.locator("#message").click();
  await page.keyboard.press("d");
  await page.waitForTimeout(500);
  const typed = await page.inputValue("#message");
  if (typed !== "d" || (await page.locator(".decided").count()) !== 0) {
    throw new Error(`typing d in the message decided, or typed ${JSON.stringify(typed)}`);
  }
  await page.locator("#message").fill("");
  await page.locator("h2", { hasText: "Decide" }).click();
  await page.keyboard.press("d");
  await page.waitForSelector(".decided-denied", { timeout: 10_000 });
  const keyed = (await page.locator(".decided h2").textContent()).trim();
  await page.screenshot({ path: `${shots}/find-key-denied-desktop.png`, fullPage: true });
  // `n`: the next escalation waiting.
  const from = page.url();
  await page.keyboard.press("n");
  await page.waitForURL((url) => url.toString() !== from, { timeout: 10_000 });
  const next = page.url().split("/").pop();

  // An admin replays the shipped audit under the proposed rules, on the policy page's form.
  const admin = await signIn(full.url, full.admin);
  await admin.goto(`${full.url}/policy`);
  const proposed = await (await admin.request.get(`${full.url}/policy/proposals.toml`)).text();
  await admin.locator("#handlers").fill(proposed);
  await admin.locator("input[name=since]").fill("7d");
  await Promise.all([admin.waitForURL(/\/policy\/replay/), admin.locator("form[action^='/policy/replay'] button").click()]);
  const replayed = (await admin.locator("h2", { hasText: "decided again" }).textContent()).trim();
  for (const [viewport, width] of [[DESKTOP, "desktop"], [PHONE, "phone"]]) {
    await admin.setViewportSize(viewport);
    const wide = await admin.evaluate(() => document.documentElement.scrollWidth > document.documentElement.clientWidth);
    if (wide) throw new Error(`the replay's findings at ${viewport.width} px scroll sideways`);
    await admin.screenshot({ path: `${shots}/policy-replayed-${width}.png`, fullPage: true });
  }
  await admin.close();

  console.log(JSON.stringify({
    id, subject, reasons, decided, before, after, escapes, drawn, replayed, fleet,
    found: { searched, none, second, outcomes, said, kept, local, keyed, next },
  }));
} finally {
  await browser.close();
}
