// The review page's one script (the Content-Security-Policy allows this file and nothing
// else): every few seconds it asks /queue/live how many requests have a gate waiting for a
// decision, puts that number in the tab's title, and draws the queue again when what waits has
// changed (not while a filter is being chosen). The pages work without it.
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
