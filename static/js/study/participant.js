// The participant page: one step at a time, as the server decided (step-data). This module only adds
// behaviour to what the template drew: it collects the answer, submits it with an idempotency key
// (submit.js) and, only after the server acknowledged it, goes where the server says (`next`).
//
// UI text comes translated from the page (#ui-text data attributes, Django's catalogue); the study's own texts
// are already in the page in the session's language.

import { measureEnvironment } from "./environment.js";
import { refusalOf } from "./requirements.js";
import { Refused, submitAnswer } from "./submit.js";
import { finishPlayback, firstPaintAt, playTrial } from "./trial.js";

const view = JSON.parse(document.getElementById("step-data").textContent);
const root = document.getElementById("step");
const uiText = document.getElementById("ui-text");
const submitUrl = new URL("submit", window.location.href.split(/[?#]/)[0]).pathname;

/** A translated UI string by key (the camelCase form of the data attribute), with {name} placeholders. */
function T(key, params = {}) {
  const text = (uiText && uiText.dataset[key]) || key;
  return text.replace(/\{(\w+)\}/g, (_, name) => String(params[name]));
}

const errorEl = () => root.querySelector(":scope .error[role=alert]:not(.field-error)");

function showError(message) {
  const el = errorEl();
  if (!el) return;
  el.textContent = message;
  el.hidden = !message;
}

let busy = false;
let beforeLeave = null; // async work to finish after the acknowledgement, before leaving (paint logs)

function setButtons(disabled) {
  for (const b of root.querySelectorAll("button")) {
    if (disabled) {
      b.dataset.wasDisabled = b.disabled ? "1" : "";
      b.disabled = true;
    } else {
      b.disabled = b.dataset.wasDisabled === "1";
    }
  }
}

/** Submit `payload` for this step once; on the acknowledgement go to `next`. Re-entrant calls are ignored. */
async function send(payload) {
  if (busy) return false;
  busy = true;
  setButtons(true);
  showError("");
  root.dataset.submitting = "1";
  try {
    const ack = await submitAnswer({
      url: submitUrl, step: view.step, payload,
      onRetry: () => showError(T("retrying")),
    });
    root.dataset.acknowledged = ack.ack;
    if (beforeLeave) await beforeLeave();
    window.location.assign(ack.next);
    return true;
  } catch (e) {
    if (e instanceof Refused && e.status === 409) {
      showError(T("reloading")); // the server moved on (another tab, a late retry): show its current step
      window.location.reload();
      return false;
    }
    showError(e instanceof Refused && e.status === 400 ? `${T("error")} (${e.message})` : T("error"));
    busy = false;
    delete root.dataset.submitting;
    setButtons(false);
    return false;
  }
}

// --- steps -----------------------------------------------------------------------------------------------------

async function consentStep() {
  const accept = root.querySelector('[data-answer="accept"]');
  let env = null; // the measured device, sent with the answer (the server checks it again)
  accept.addEventListener("click", () => send(env ? { consent: true, environment: env } : { consent: true }));
  root.querySelector('[data-answer="decline"]').addEventListener("click", () => send({ consent: false }));
  const box = root.querySelector("#requirements");
  if (!box) return;
  // The device requirement is stated above and checked here, before anything is recorded.
  const status = box.querySelector("#device-status");
  const refused = box.querySelector("#device-refused");
  const question = root.querySelector("#consent-question");
  accept.disabled = true;
  const check = async () => {
    status.hidden = false;
    env = (await measureEnvironment()).environment;
    const why = refusalOf(view.limits || {}, env);
    root.dataset.device = why ? "refused" : "ok";
    box.classList.toggle("refused", Boolean(why));
    refused.hidden = !why;
    question.hidden = Boolean(why);
    if (!why) {
      status.textContent = T("deviceOk");
      accept.disabled = false;
      return;
    }
    status.hidden = true;
    box.querySelector('[data-answer="recheck"]').hidden = why === "device"; // a phone stays a phone
    const deviceKey = `device${env.device[0].toUpperCase()}${env.device.slice(1)}`;
    box.querySelector("#refusal-reason").textContent = {
      device: T("refusedDevice", { device: T(deviceKey) }),
      viewport: T("refusedViewport", { width: env.viewport.width, height: env.viewport.height }),
      refresh: T("refusedRefresh", { n: Math.round(env.refresh_hz) }),
    }[why];
  };
  box.querySelector('[data-answer="recheck"]').addEventListener("click", check);
  box.querySelector('[data-answer="leave"]').addEventListener("click", () => send({ consent: false, environment: env }));
  await check();
}

function textStep() {
  const button = root.querySelector('[data-answer="continue"]');
  if (button) button.addEventListener("click", () => send({}));
}

async function environmentStep() {
  const status = root.querySelector("#env-status");
  const result = root.querySelector("#env-result");
  const retry = root.querySelector('[data-answer="retry"]');
  const run = async () => {
    retry.hidden = true;
    status.textContent = T("envChecking");
    const payload = await measureEnvironment();
    const env = payload.environment;
    result.querySelector('[data-field="refresh_hz"]').textContent = T("hz", { n: Math.round(env.refresh_hz) });
    result.querySelector('[data-field="viewport"]').textContent = `${env.viewport.width} × ${env.viewport.height}`;
    const deviceKey = `device${env.device[0].toUpperCase()}${env.device.slice(1)}`;
    result.querySelector('[data-field="device"]').textContent = T(deviceKey);
    result.hidden = false;
    status.textContent = T("envDone");
    if (!(await send(payload))) retry.hidden = false;
  };
  retry.addEventListener("click", run);
  await run();
}

function questionnaireStep() {
  const form = root.querySelector("#questionnaire");
  const clear = (ev) => { // an answer given clears its item's message
    const fs = ev.target.closest(".q-item");
    if (!fs || !fs.classList.contains("invalid")) return;
    fs.classList.remove("invalid");
    fs.querySelector(".field-error").hidden = true;
    if (!form.querySelector(".q-item.invalid")) showError("");
  };
  form.addEventListener("input", clear);
  form.addEventListener("change", clear);
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const { answers, ok } = collectAnswers(form);
    if (!ok) {
      showError(T("required"));
      return;
    }
    send({ answers });
  });
}

/** The questionnaire's answers in the shape responses.questionnaire_answers checks; marks missing ones. */
function collectAnswers(form) {
  const answers = {};
  let ok = true;
  for (const fs of form.querySelectorAll(".q-item")) {
    const id = fs.dataset.id;
    const type = fs.dataset.type;
    const required = fs.dataset.required === "true";
    const fieldError = fs.querySelector(".field-error");
    let value = null;
    let problem = "";
    if (type === "likert") {
      const checked = fs.querySelector("input[type=radio]:checked");
      value = checked ? Number(checked.value) : null;
    } else if (type === "single_choice" || type === "multiple_choice") {
      const other = (fs.querySelector(".other-text")?.value || "").trim();
      const picked = [...fs.querySelectorAll(`input[name="${CSS.escape(id)}"]:checked`)].map((i) => {
        if (i.value !== "__other__") return i.value;
        if (!other) problem = T("otherMissing");
        return `other:${other}`;
      });
      value = type === "single_choice" ? (picked[0] ?? null) : picked;
    } else if (type === "number") {
      const input = fs.querySelector("input");
      if (input.value.trim() !== "") {
        value = Number(input.value);
        if (!Number.isFinite(value) || !input.checkValidity()) problem = T("numberInvalid");
      }
    } else {
      value = fs.querySelector("textarea").value.trim();
    }
    const empty = value === null || value === "" || (Array.isArray(value) && value.length === 0);
    if (!problem && empty && required) problem = T("required");
    fieldError.textContent = problem;
    fieldError.hidden = !problem;
    fs.classList.toggle("invalid", Boolean(problem));
    if (problem) ok = false;
    if (!empty) answers[id] = value;
  }
  return { answers, ok };
}

async function trialStep() {
  const trial = view.trial;
  const controls = root.querySelector("#controls");
  const status = root.querySelector("#trial-status");
  const next = root.querySelector("#next");
  const comment = root.querySelector("#comment");
  const slider = root.querySelector("#slider");
  const state = { clients: [], players: [] };
  const needsNext = Boolean(comment || slider);
  let shownAt = null;
  let chosen = null;
  let chosenAt = null;

  const ui = {
    text: T,
    status(text) { status.textContent = text; },
    showControls() {
      if (shownAt !== null) return;
      controls.hidden = false;
      shownAt = performance.now();
      root.dataset.controls = "shown";
    },
  };

  beforeLeave = () => finishPlayback(state.clients);

  const answer = () => {
    const payload = { response: chosen, response_ms: Math.max(0, chosenAt - shownAt) };
    if (trial.type === "reading") {
      const first = firstPaintAt(state.players[0]);
      payload.reading_ms = Math.max(0, chosenAt - (first ?? chosenAt));
    }
    if (comment) {
      const text = comment.value.trim();
      if (!text && trial.comment === "required") {
        showError(T("commentRequired"));
        return;
      }
      if (text) payload.comment = text;
    }
    send(payload);
  };

  for (const button of controls.querySelectorAll(".choice")) {
    button.addEventListener("click", () => {
      if (busy || shownAt === null) return;
      const raw = button.dataset.value;
      chosen = trial.type === "rating" ? Number(raw) : raw;
      chosenAt = performance.now();
      for (const b of controls.querySelectorAll(".choice")) b.setAttribute("aria-pressed", String(b === button));
      if (needsNext) {
        next.hidden = false;
        next.disabled = false;
      } else {
        answer();
      }
    });
  }
  if (slider) {
    slider.addEventListener("input", () => {
      chosen = Number(slider.value);
      chosenAt = performance.now();
      slider.classList.add("touched");
      const shown = root.querySelector("#slider-value");
      if (shown) { shown.textContent = slider.value; shown.hidden = false; }
      next.disabled = false;
    });
  }
  if (needsNext) {
    next.hidden = false;
    next.disabled = true;
    next.addEventListener("click", () => {
      if (chosen === null) {
        showError(T("choose"));
        return;
      }
      answer();
    });
  }

  try {
    await playTrial({ trial, lang: view.language, root, ui, state });
  } catch (e) {
    status.textContent = T("playbackFailed");
    status.classList.add("error-text");
    root.dataset.playback = "failed";
    console.warn("pacelab: playback failed", e);
  }
}

function endStep() {
  const url = root.dataset.redirect;
  if (!url) return;
  let left = Number(root.dataset.redirectSeconds || 5);
  const note = root.querySelector("#redirect-note");
  const tick = () => {
    if (left <= 0) {
      window.location.assign(url);
      return;
    }
    if (note) note.textContent = T("redirectIn", { n: left });
    left -= 1;
    setTimeout(tick, 1000);
  };
  tick();
}

function withdrawLink() {
  const form = document.getElementById("withdraw-form");
  if (!form) return;
  form.addEventListener("submit", (ev) => {
    if (!window.confirm(T("withdrawConfirm"))) ev.preventDefault();
  });
}

// Back/forward cache: a page restored from memory would show a step the server may have left behind.
window.addEventListener("pageshow", (ev) => { if (ev.persisted) window.location.reload(); });

/** Keep the browser's Back inside the study: every step has the same URL, so without this Back would leave
 * the study (and Forward would come back to a restarted trial). A second history entry for this page is
 * pushed; Back returns to the first one without leaving the page, the page says that answers cannot be
 * changed, and the entry is pushed again (which also empties Forward). */
function showBackNotice() {
  const notice = document.getElementById("back-notice");
  if (!notice) return;
  notice.textContent = T("backNotice");
  notice.hidden = false;
  root.dataset.backNotice = "shown";
}

function guardBack() {
  const kind = root.dataset.kind;
  if (kind === "end" || kind === "consent" || !window.history.pushState) return;
  const here = window.location.href;
  const nav = performance.getEntriesByType ? performance.getEntriesByType("navigation")[0] : null;
  if (nav && nav.type === "back_forward") showBackNotice(); // came back to an older entry of this study
  window.history.replaceState({ pacelab: "step" }, "", here);
  window.history.pushState({ pacelab: "guard" }, "", here);
  window.addEventListener("popstate", () => {
    showBackNotice();
    window.history.pushState({ pacelab: "guard" }, "", here);
  });
}

withdrawLink();
guardBack();
const handlers = { consent: consentStep, environment: environmentStep, questionnaire: questionnaireStep,
                   trial: trialStep, end: endStep };
(handlers[root.dataset.kind] || textStep)();
root.dataset.ready = "1";
