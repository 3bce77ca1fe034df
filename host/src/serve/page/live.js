// The review page's one script (the Content-Security-Policy allows this file and nothing
// else). The pages work without it; with it:
// - every few seconds it asks /queue/live how many requests have a gate waiting for a
//   decision, puts that number in the tab's title, and draws the queue again when what waits
//   has changed (not while a filter is being chosen);
// - every <time> is written in the reader's own zone (the page draws UTC; the UTC time stays
//   in the title, shown on hover);
// - on an escalation's page, keys: a allow, d deny (the form's own buttons are clicked: the
//   same CSRF-protected form), n or j the next escalation waiting, k the previous one. Never
//   while typing, nor with Ctrl, Alt or Cmd.
const title = document.title.replace(/^\(\d+\) /, "");
const version = document.body.dataset.version;

async function look() {
  let live;
  try {
    const answer = await fetch("/queue/live", { cache: "no-store", redirect: "error" });
    if (!answer.ok) return;
    live = await answer.json();
  } catch {
    return;
  }
  document.title = (live.waiting > 0 ? `(${live.waiting}) ` : "") + title;
  const busy = document.activeElement?.matches("input, select, textarea");
  if (version !== undefined && live.version !== version && !busy) location.reload();
}

setInterval(look, 3000);

const local = new Intl.DateTimeFormat(undefined, {
  year: "numeric", month: "2-digit", day: "2-digit",
  hour: "2-digit", minute: "2-digit", second: "2-digit", timeZoneName: "short",
});
for (const time of document.querySelectorAll("time[datetime]")) {
  const at = new Date(time.dateTime);
  if (Number.isNaN(at.getTime())) continue;
  const utc = time.title;
  if (time.classList.contains("ago")) {
    time.title = `${local.format(at)} (${utc})`;
  } else {
    time.textContent = local.format(at);
  }
  time.dataset.local = "";
}

const keys = {
  a: () => document.querySelector("form button[name=choice][value=allow]")?.click(),
  d: () => document.querySelector("form button[name=choice][value=deny]")?.click(),
  n: () => document.getElementById("next-escalation")?.click(),
  j: () => document.getElementById("next-escalation")?.click(),
  k: () => document.getElementById("previous-escalation")?.click(),
};
document.addEventListener("keydown", (event) => {
  if (event.ctrlKey || event.altKey || event.metaKey || event.repeat) return;
  if (event.target.closest?.("input, textarea, select, [contenteditable]")) return;
  const act = keys[event.key];
  if (!act || !document.querySelector(".keys, #next-escalation, #previous-escalation")) return;
  event.preventDefault();
  act();
});
