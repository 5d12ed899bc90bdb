// Progress of a plan computed in the background: poll status.json, move the bar, reload when it is done.

const POLL_MS = 1_500;

export function startPlanProgress(root) {
  if (root.dataset.finished === "1") return null;
  const poll = async () => {
    try {
      const response = await fetch(root.dataset.statusUrl, { headers: { Accept: "application/json" } });
      if (!response.ok) return;
      const msg = await response.json();
      document.getElementById("plan-bar").value = Number(msg.percent) || 0;
      document.getElementById("plan-done").textContent = String(msg.done);
      document.getElementById("plan-total").textContent = String(msg.total);
      if (msg.finished) {
        clearInterval(timer);
        window.location.reload();
      }
    } catch {
      // the next poll tries again
    }
  };
  const timer = setInterval(poll, POLL_MS);
  return timer;
}

const root = document.getElementById("plan-progress");
if (root) startPlanProgress(root);
