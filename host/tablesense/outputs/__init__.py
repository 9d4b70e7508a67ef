"""The outputs room: the table event stream (`EventBus`) and what it drives: cell LED frames, seat GPIO
(RPi.GPIO or sim), speech, the console.
"""
