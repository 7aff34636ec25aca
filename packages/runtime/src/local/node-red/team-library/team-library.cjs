// A library source for Node-RED's library panel: the team library, whose entries the platform
// keeps (FlowFuse's `flowforge-team-library`). Node-RED makes one of these for each source of
// that type in its settings (settings.cjs); `client` is platform.cjs's, which holds the
// instance's token, so nothing here or in the editor ever sees it.
"use strict";
/* global module */

module.exports = function (RED) {
  class TeamLibrary {
    constructor(config) {
      if (!config.client) throw new Error("the team library has no platform to reach");
      this.type = "flowforge-team-library";
      this.id = config.id;
      this.label = config.label;
      this.client = config.client;
    }

    async init() {}

    /** An entry's body, or a folder's listing (sub-folders' names, then `{ fn, …meta }`). */
    getEntry(type, path) {
      return this.client.getEntry(type, path);
    }

    saveEntry(type, path, meta, body) {
      return this.client.saveEntry(type, path, meta, body);
    }
  }

  RED.plugins.registerPlugin("flowforge-team-library", {
    type: "node-red-library-source",
    class: TeamLibrary,
  });
};
