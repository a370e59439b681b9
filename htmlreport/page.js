// The documents this page shows are inside it: a JSON string of base64
// of gzip, decompressed by the browser itself. Nothing is fetched.
"use strict";
async function stormsimDocument(id) {
  const el = document.getElementById(id);
  const bytes = Uint8Array.from(atob(JSON.parse(el.textContent)), (c) => c.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Response(stream).text();
}
document.querySelectorAll("button[data-download]").forEach((button) => {
  button.addEventListener("click", async () => {
    const id = button.dataset.download;
    const text = await stormsimDocument(id);
    const url = URL.createObjectURL(new Blob([text], { type: "application/json" }));
    const a = document.createElement("a");
    a.href = url;
    a.download = document.getElementById(id).dataset.file;
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  });
});
