// The review table's bulk selection: "select all on this page" and a live count of the ticked rows. Without
// JavaScript every checkbox still works; this only saves clicks.
const form = document.getElementById("bulk");
const all = document.getElementById("select-all");
const count = document.getElementById("selected-count");

function boxes() {
  return [...form.querySelectorAll('input[type="checkbox"][name="session"]')];
}

function update() {
  const ticked = boxes().filter((b) => b.checked).length;
  if (count) count.textContent = ticked ? count.dataset.template.replace("{n}", String(ticked)) : "";
  if (all) {
    all.checked = ticked > 0 && ticked === boxes().length;
    all.indeterminate = ticked > 0 && ticked < boxes().length;
  }
}

if (form && all) {
  all.addEventListener("change", () => {
    for (const b of boxes()) b.checked = all.checked;
    update();
  });
  form.addEventListener("change", (event) => {
    if (event.target.name === "session") update();
  });
  update();
}
