// Submitting the answer to the current step (POST /p/<token>/submit, see views_participant.submit).
//
// Every answer carries a client-generated id (the server's idempotency key) and the step number. A network
// failure or a 5xx is retried with backoff under the SAME id, so an answer the server stored but whose
// acknowledgement was lost is acknowledged again, never stored twice. A 409 (stale step, session no longer
// active) means this page is out of date: the caller reloads and the server shows the right step. A 400 is a
// refused answer: nothing was stored and the message is shown in place.

const RETRY_BASE_MS = 400;
const RETRY_MAX_MS = 8000;

/** A fresh idempotency key (crypto.randomUUID where available: it needs a secure context, or localhost). */
export function newClientId() {
  if (globalThis.crypto && typeof crypto.randomUUID === "function") return crypto.randomUUID();
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The CSRF token of this page: the hidden form input Django renders, else the csrftoken cookie. */
export function csrfToken(doc = document) {
  const input = doc.querySelector("input[name=csrfmiddlewaretoken]");
  if (input && input.value) return input.value;
  const m = /(?:^|;\s*)csrftoken=([^;]+)/.exec(doc.cookie);
  return m ? decodeURIComponent(m[1]) : "";
}

export class Refused extends Error {
  constructor(body, status) {
    super(body.error || `refused (${status})`);
    this.code = body.code;
    this.status = status;
    this.body = body;
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Send `payload` for `step` until the server answers: resolves with the acknowledgement {ok, ack, next, state},
 * rejects with Refused (400/404/409/403). `onRetry(attempt, error)` is called before each retry.
 */
export async function submitAnswer({ url, step, payload, clientId = newClientId(), onRetry, fetchImpl = fetch }) {
  const body = JSON.stringify({ client_id: clientId, step, payload });
  for (let attempt = 0; ; attempt++) {
    let response = null;
    let failure = null;
    try {
      response = await fetchImpl(url, {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-CSRFToken": csrfToken() },
        body,
        credentials: "same-origin",
        cache: "no-store",
      });
    } catch (e) {
      failure = e; // network down, server gone: retry under the same id
    }
    if (response && response.status < 500) {
      let data = {};
      try {
        data = await response.json();
      } catch {
        data = { code: "invalid", error: `unexpected answer from the server (${response.status})` };
      }
      if (response.ok && data.ok && data.ack === clientId) return data;
      if (response.ok) {
        failure = new Error("acknowledgement does not match the answer sent");
      } else {
        throw new Refused(data, response.status);
      }
    }
    failure = failure || new Error(`server error ${response.status}`);
    if (onRetry) onRetry(attempt + 1, failure);
    await sleep(Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** attempt) * (0.75 + Math.random() * 0.5));
  }
}
