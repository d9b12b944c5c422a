// Drives `workmate demo`'s /sandbox page in Debian's headless Chromium: on the chosen platform
// (Slack, the default, Feishu, WeCom or DingTalk, picked with the page's tabs), Alice (张三 on
// WeCom) asks for the weekly report, clicks "Approve once" on the approval card, and the answer
// must appear in the thread. On WeCom the answer's stream bubble must appear before the card, and
// the stream must finish (no bubble still typing) at the end. On DingTalk the answer's AI card
// must appear (writing) before the approval card, the approval must show for the other person
// too (the card updated for everyone), and the AI card must finish writing.
//
// Usage: node e2e/sandbox.mjs http://127.0.0.1:PORT [slack|feishu|wecom|dingtalk]
// Exits 0 on success with a screenshot at <repo>/target/e2e/sandbox.png (Slack) or
// sandbox-<platform>.png (the others); on any failure prints what the page showed and exits 1.
// The whole run is bounded by 60 s.

import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
const MESSAGE = "write this week's report and save it as a file";
// The demo script's final answer, "Done: **weekly-report.md** is saved …", as the page renders it.
const ANSWER = /weekly-report\.md\s+is saved/;
// The answer's last words: the stream has finished.
const ANSWER_END = "Ask again any time for a fresh copy.";
// The approval card once resolved: the buttons are replaced for everyone.
const APPROVED = /Approved by .+ · once/;
// DingTalk's approval template shows its status line instead: approved, and who approved.
const DINGTALK_APPROVED = /Approved · 审批人 \S+/;
const OVERALL_MS = 60_000;

const PLATFORMS = { slack: "Slack", feishu: "Feishu", wecom: "WeCom", dingtalk: "DingTalk" };
// Who asks, by the name the page's person picker shows; on DingTalk, who checks the card after.
const ASKER = { slack: "Alice", feishu: "Alice", wecom: "张三", dingtalk: "Alice" };
const OTHER = { dingtalk: "Bob" };
// Who writes second, in the same group: their own exchange.
const SECOND = { slack: "Bob", feishu: "Bob", wecom: "李四", dingtalk: "Bob" };
// The end of the demo's answer to anything but the report.
const GREETING_END = "an approval and a streamed answer.";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..");

const base = (process.argv[2] || "").replace(/\/+$/, "");
const platform = process.argv[3] || "slack";
if (!/^https?:\/\//.test(base) || !Object.hasOwn(PLATFORMS, platform)) {
  console.error("usage: node e2e/sandbox.mjs http://127.0.0.1:PORT [slack|feishu|wecom|dingtalk]");
  process.exit(2);
}
const screenshot = join(repo, "target", "e2e", platform === "slack" ? "sandbox.png" : `sandbox-${platform}.png`);

const profile = mkdtempSync(join(tmpdir(), "workmate-e2e-chromium-"));
let browser;
let page;

async function pageText() {
  try {
    return await page.locator("body").innerText({ timeout: 2_000 });
  } catch (e) {
    return `(page text unavailable: ${e.message})`;
  }
}

async function cleanup() {
  try {
    await browser?.close();
  } catch {
    // already gone
  }
  rmSync(profile, { recursive: true, force: true });
}

async function fail(reason) {
  console.error(`FAIL: ${reason}`);
  if (page) {
    console.error("--- page text ---");
    console.error(await pageText());
    console.error("-----------------");
    try {
      mkdirSync(dirname(screenshot), { recursive: true });
      await page.screenshot({ path: screenshot.replace(/\.png$/, "-failure.png"), fullPage: true, timeout: 5_000 });
    } catch {
      // best effort
    }
  }
  await cleanup();
  process.exit(1);
}

const overall = setTimeout(() => {
  fail(`not done within ${OVERALL_MS / 1000} s`);
}, OVERALL_MS);

async function main() {
  // A new empty profile every run; playwright passes it to Chromium as --user-data-dir.
  browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
    viewport: { width: 1280, height: 1100 },
  });
  page = browser.pages()[0] || (await browser.newPage());
  page.on("pageerror", (e) => console.error(`page error: ${e.message}`));

  await page.goto(`${base}/sandbox`, { waitUntil: "load", timeout: 15_000 });
  await page.locator("#composer").waitFor({ timeout: 10_000 });

  // Pick the platform with its tab, as a person would.
  const tab = page.locator(`#platform-${platform}`);
  await tab.click();
  await page.locator(`#platform-${platform}[aria-selected="true"]`).waitFor({ timeout: 5_000 });
  console.log(`picked ${PLATFORMS[platform]}`);

  // Alice (张三 on WeCom) starts a new thread through the composer.
  const asker = ASKER[platform];
  await page.selectOption("#user", { label: asker });
  await page.fill("#text", MESSAGE);
  await page.click("#composer button[type=submit]");
  console.log(`sent as ${asker} on ${PLATFORMS[platform]}: ${MESSAGE}`);

  if (platform === "wecom") {
    // workmate's passive reply opens the stream: a bubble from workmate below the message.
    await page.locator("#threads .msg.bot").first().waitFor({ state: "visible", timeout: 15_000 });
    console.log("the answer's stream bubble appeared");
  }
  if (platform === "dingtalk") {
    // The answer's AI card comes first, before the approval card.
    await page.locator("#threads .dt-ai").first().waitFor({ state: "visible", timeout: 15_000 });
    const writing = (await page.locator("#threads .dt-ai .typing").count()) > 0;
    console.log(`the answer's AI card appeared${writing ? ", writing" : ""}`);
  }

  // The approval card's button; the page re-renders on every state change, so use a locator
  // (re-resolved on each try) rather than an element handle.
  const approve = page.locator("#threads button", { hasText: "Approve once" }).first();
  await approve.waitFor({ state: "visible", timeout: 30_000 });
  await approve.click({ timeout: 10_000 });
  console.log('clicked "Approve once"');

  const deadline = Date.now() + 30_000;
  for (;;) {
    const error = (await page.locator("#error").innerText()).trim();
    if (error) throw new Error(`the page reported: ${error}`);
    const threads = await page.locator("#threads").innerText();
    // On WeCom and DingTalk the stream must have finished: nothing is still typing.
    const streaming =
      (platform === "wecom" || platform === "dingtalk") && (await page.locator("#threads .typing").count()) > 0;
    const approved = (platform === "dingtalk" ? DINGTALK_APPROVED : APPROVED).test(threads);
    const settled =
      !streaming &&
      ANSWER.test(threads) &&
      threads.includes(ANSWER_END) &&
      approved &&
      !threads.includes("Approve once");
    if (settled) break;
    if (Date.now() > deadline) {
      throw new Error(
        `within 30 s of approving: answer ${ANSWER.test(threads) ? "shown" : "missing"}, ` +
          `stream ${threads.includes(ANSWER_END) && !streaming ? "finished" : "unfinished"}, ` +
          `approval card ${approved ? "resolved" : "unresolved"}`,
      );
    }
    await page.waitForTimeout(250);
  }
  console.log("found the answer (weekly-report.md is saved) and the card shows the approval");

  if (OTHER[platform]) {
    // Everyone sees the decision, not only the clicker: look as the other person.
    await page.selectOption("#user", { label: OTHER[platform] });
    const threads = await page.locator("#threads").innerText();
    if (!DINGTALK_APPROVED.test(threads) || threads.includes("Approve once")) {
      throw new Error(`${OTHER[platform]} does not see the approval card as approved`);
    }
    console.log(`${OTHER[platform]} sees the approval too`);
  }

  // A second person writes in the same group: they get their own answer, and nobody on the
  // page is named by an internal id.
  const second = SECOND[platform];
  await page.selectOption("#user", { label: second });
  await page.fill("#text", "hello");
  await page.click("#composer button[type=submit]");
  await page.locator("#threads", { hasText: GREETING_END }).waitFor({ timeout: 20_000 });
  // Wait for the answer to finish: no Stop button, nothing still typing.
  const settledBy = Date.now() + 15_000;
  while (
    (await page.locator("#threads button", { hasText: "Stop" }).count()) > 0 ||
    (await page.locator("#threads .typing").count()) > 0
  ) {
    if (Date.now() > settledBy) throw new Error(`${second}'s answer never finished`);
    await page.waitForTimeout(250);
  }
  const everything = await page.locator("#threads").innerText();
  const internal = everything.match(/\b(slack|feishu|wecom|dingtalk)-[A-Za-z0-9_]+/);
  if (internal) throw new Error(`an internal id is shown: ${internal[0]}`);
  // WeCom's robot gives only userids: the names come through the self-built app.
  if (platform === "wecom" && !everything.includes("Approved by 张三")) {
    throw new Error("WeCom names 张三 by userid, not by name");
  }
  console.log(`${second} got their own answer; no internal id is shown`);

  // Status icons are drawn by the page itself, not left to an emoji font.
  const drawn = await page.locator("#threads img.icon").count();
  if (drawn === 0) throw new Error("no status icon was drawn");
  console.log(`${drawn} status icons drawn`);

  mkdirSync(dirname(screenshot), { recursive: true });
  await page.screenshot({ path: screenshot, fullPage: true });
  console.log(`screenshot: ${screenshot}`);
  clearTimeout(overall);
  await cleanup();
  process.exit(0);
}

main().catch((e) => fail(e && e.stack ? e.stack : String(e)));
