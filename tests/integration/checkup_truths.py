"""A graph whose check-up must tell the truth (used by the golden ``footprint graph`` test)."""

from footprint import define_skill, skill_graph
from footprint.graph import All, Keywords, Regex

a = define_skill("a", "first", "Do a.")
b = define_skill("b", "second", "Do b.")
c = define_skill("c", "third", "Do c.")
d = define_skill("d", "fourth", "Do d.")
island = define_skill("island", "an unreached source", "Do island.")
cove = define_skill("cove", "only the island routes here", "Do cove.")

graph = (
    skill_graph(a, b, c, d, island, cove)
    .entry(a, match=All((Keywords(("refund",)), Regex("order"))))
    .entry(b, match=All((Keywords(("refund",)), Regex("order"))))
    .entry(c, match=All((Keywords(("refund",)), Regex("order"), Keywords(("late",)))),
           examples=["refund my late order"])
    .entry(d, match=Keywords(("hello",)))
    .route(island, cove, on_tool_return="sail")
    .build(check="off")
)
