// The catalogue area: what hosted instances are made from — instance types, stacks (the Node-RED
// version a driver runs) and templates (default settings). Read by everyone, changed by
// administrators; each kind is one definition, built into procedures by one builder.
import type { Area } from "../plugins/area";
import { instanceTypes } from "./instance-types";
import { catalogueRouter } from "./procedures";
import { stacks } from "./stacks";
import { templates } from "./templates";

export const catalogue = {
  procedures: {
    projectTypes: catalogueRouter(instanceTypes),
    stacks: catalogueRouter(stacks),
    templates: catalogueRouter(templates),
  },
} satisfies Area;
