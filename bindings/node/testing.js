'use strict';
module.exports = require('./lib/testing');
