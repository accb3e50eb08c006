"""The words short fact ids are made of (model/factids.py): never edit, reorder or extend.

A fact's short id is one of these words, picked by its full id, so changing the list would
change every short id ever cited in a `Facts-Used` trailer. The words are those of the
EFF large wordlist for random passphrases (Electronic Frontier Foundation, 2016, licensed
CC BY 3.0 US, https://www.eff.org/dice) that are one token, after a space, in both
cl100k_base and o200k_base, less a few words that read as instructions to a model.
tests/test_factids.py pins the list by its sha256 and checks the one-token property.
"""

WORDS_SHA256 = "c7150e1e2440c7ad8b14692b7de78b9fd2c0af66eafea1aa0200b24f61c4bb93"

WORDS = tuple("""
    abdomen abdominal abide ability able abnormal abrasive abroad abruptly absence absentee
    absolute abstract absurd accent acclaim accompany account accuracy accurate acid
    acquaint acquire acre acronym acting action activate active activism activist activity
    actress acts aerospace afar affair affected affecting affection affidavit affiliate
    affirm afflicted affluent afford afraid aftermath afternoon aged agency agenda agent
    aggregate agile agility aging agony agreed agreeing agreement ahead aide aids aim alarm
    album algebra algorithm alias aliens alike alive almost alone alongside alphabet alright
    although altitude alto aluminum alumni amazingly amber ambiance ambiguity ambiguous
    ambition ambitious ambulance amendment amid amigo amino ammonia among amount ample
    amplifier amplify amused amusement amusing anatomy anchor ancient android anew anger
    angled angles angular animal animate animation animator anime ankle annex annotate
    annoying annually another answering anthem anthology antibody antics antivirus anybody
    anyhow anymore anyone anything anytime anyway anywhere apache appealing appear appendix
    appetite applaud applause apple appliance applicant applied apply appraisal approach
    approval april arbitrary area arena arguably argue arise armed armored army aroma arose
    around arrange array arrest arrival arrive arrogance arrogant art ascend ascent
    ascertain ashamed ashes aside asleep aspect aspire astrology astronaut astronomy atlas
    atom atop attach attain attempt attendant attendee attention attentive attest attic
    attire attitude attribute auction audible audience audio audition augmented august
    authentic author autism autistic automated automatic available avalanche avatar avenue
    average aviation avid avoid await awaken award aware awhile awkward axis backdrop backed
    backing backlash backlog backpack backstage backup backward backyard bacon bacteria
    badass badge badly baggage baked bakery baking balance balancing balcony bamboo banana
    banker banking banner barbecue barber barcode barley barn barrel barrier bartender bash
    basically basics basil basin basis basket batch bath bats battered battery batting
    battle bladder blade blah blame blaming blank blast blazing bleach bleak blend bless
    blinking blitz blob blog blot blouse bluff blunt blurred blurry blush boasting boat body
    bogus boil bolster bolt bonded bonding bonus book booth boots boring borough borrower
    borrowing boss botanical both bottle bottom bounce bouncing bounding boxer boxing breach
    breath breeding breeze brethren brewery brewing brick bride brigade bright brilliant
    bring brink brittle broadband broadcast broaden broadly broken broker bronze brought
    browse browsing brunch brunette brush brute bubble bucket buckle budding buddy budget
    buffalo buffer buggy bulb bulk bullish bullpen bully bunch bundle bunny bush bust buzz
    cabbage cable cache cage cake calcium calculate calculus caliber calm calorie cameo
    camera camper camping campus canal cancel candle candy cane canine cannabis canned
    cannon cannot canon canopy canyon capable capacity cape capital capped capsule caption
    captive captivity capture caramel caravan carbon cardboard cardiac cardinal carefully
    caregiver careless cargo caring carnival carried carrot carry cartel cartoon cartridge
    carve carving cascade case cash casing casino cassette casually casualty catalog
    catalyst catcher catching catchy catering cathedral cattle causal cause causing caution
    cautious cavalry cavity cedar celery celestial cement census ceramics ceremony certainly
    certainty certified certify chain chair challenge chamber champion chance change channel
    chant chaos chapter character charcoal charger charging charity charm charter chase
    chasing chatter chatting cheating cheek cheer cheese cheesy chef chemicals chess chest
    chewing chief childcare childhood childish chili chill chip chloride chlorine choice
    choking chooser choosing chop chosen chrome chuck chunk churn chute cider cinema
    cinnamon circle circular circus citation citizen citrus city civic civil clad claim
    clamp clang clarify clarity clash class clause claw clay clean clear clerk clever client
    climate cling clinic clip clique cloak clock clone cloning closure clothes clothing
    cloud clubhouse clustered clutch clutter coach coastal coaster coastline coat cocoa
    coconut cod coffee cognition cognitive coherence coherent cohesive coil coke cola cold
    collage collapse collar collected collector collide collision colonial colony colossal
    coma come comfort comfy comic coming comma commence commend comment commerce commodity
    common commute commuting companion company compare compel compile component composed
    composer composite compost compound compress comprised computer computing conceal
    conceded concept concerned concert concise conclude concrete condition conducive
    conductor conduit cone confess confident configure confined confirm conflict conform
    confront confused confusing confusion congress connected connector consensus consent
    console constant constrain construct consult consumer consuming contact container
    contempt contend contents contest context contour control convent cope copied coping
    copper copy coral cork corner coronary corporate correct corridor cortex cosmetics
    cosmic cosmos cost cottage cotton couch cough could countdown counting countless country
    county courier covenant cover coveted cozy crane crank crate crave craving crawling
    crazy create creation creative creature credible credit creed crib cricket cried crimson
    crispy criteria crop cross crowd crown crucial cruelty crunchy crushed crusher crushing
    crust crying crystal cube cucumber culinary culprit cultivate cultural culture cupid
    curator cure curing curled curly curry curse cursor curtain curvature curve custody
    customary customer customize customs cut cycle cyclic cycling cyclist cylinder dab dad
    dagger daily dairy dance dancing danger dangling darkness darling darn dart dash data
    dating daughter daunting dawn daycare daylight daytime dazzling dealer dealing dealt
    dean debate debating debit debtor debug decade decay deceased deceit december decent
    deception deceptive decimal decipher deck declared decline decode decorated decorator
    decrease decree dedicate deduct deed deem deepen deeply default defeat defective
    defendant defender defense defensive deferred define definite degraded degree deity
    delay delegate deletion delicate delicious delighted delivery delta deluxe demanding
    demeanor demise democracy democrat denial denim denote dense density dental dentist
    departed departure depict depletion deploy deport depress depth deputy derail derby
    derived deserve deserving designate designed designer designing desktop despair despite
    destiny destruct detached detail detection detective detector detention detergent
    deviation device devotion diabetes diabetic diagnoses diagnosis diagram dial diameter
    diaper diary dice dictate dictator difficult diffusion dig dilation diligence diligent
    dime diminish diner dining dinner dioxide diploma dipped dipping directed direction
    directive directly directory disabled disagree disaster disbelief discard discern
    discharge disclose discount discourse discover discuss disdain disgrace dish disk
    dislike dismiss disorder disparate disparity dispatch dispersed display disposal dispose
    dispute disrupt distance distant distinct distort distract distress district distrust
    ditch divided dividend dividing diving divisible division dizzy dock doctrine document
    dodge doing dollar dolphin domain domestic donated donation donor doorstep doorway
    dorsal dosage dose dotted doubling douche dove down dragging drainage drained dramatic
    drank drastic draw dreaded dreadful dress drew dried drift drilling drinking dripping
    driven driver driveway driving drone dropout drove drown drum dry dubbed duct dude duke
    duly dumping dumpster duo duplex duplicate durable duration during dusk dust duty dwarf
    dwelling dynamic dynasty each eagle early earthly easiest easily easing eaten eating
    eats ebay ebony ebook eccentric echo eclipse ecology economic economist economy
    ecosystem edge edition editor educated education educator effective effects efficient
    effort either eject elaborate elastic elbow elderly eldest election elective elephant
    elevate elevation elevator eleven elf eligible eliminate elite elk ellipse elm elsewhere
    elusive elves embargo embark embassy ember emblem embody emergency emission emit emotion
    empathy emperor emphasis emphasize empirical employed employee employer empower empty
    enable enamel enchanted enclosure encode encore encounter encourage encrypt ended ending
    endless endorse endpoint endurance enduring energetic energy enforced engaged engaging
    engine engraved engulf enhance enjoyable enjoying enjoyment enlarged enlisted enrich
    enroll ensure entail entering entertain enticing entire entity envelope envision envoy
    envy enzyme epic epidemic epilepsy episode equal equation equipment equity eradicate
    erased ergonomic error erupt escalate espresso essay essence essential establish estate
    esteemed estimate estimator estrogen eternal eternity ethanol ether ethics evade
    evaluate evaluator even everybody everyday everyone evidence evident evil evoke
    evolution evolve exact example exceeding exception excess exchange exciting exclude
    excluding exclusion exclusive excursion excuse exemplary exemption exert exhaust exile
    existing exit expand expansion expansive expend expenses expensive expert expire explain
    explicit explode explore exploring exponent exporter exposure express exquisite extended
    extending extent exterior external extinct extras fabric fabulous facebook facial
    facility facing faction factor factual faculty fade fading failing fall false fame
    familiar family famine fanatic fancy fantastic fantasy faster fasting faucet favorable
    favored favorite fax feast federal feed feel feminine feminism feminist fence fencing
    ferment ferry festival festive fetal fetch fever fiber fiction fidelity fifteen fifth
    fifty figure filing filled filler filling film filter finale finalist finalize finally
    finance financial finer finished finishing finite fit five flagship flame flap flashing
    flashy flask flatten flavored flavorful fled flick flight flip flirt float flock flop
    floral flyer flying foam foe fog foil folk font food fool footage football footer
    footing footprint footwear fossil foster founder founding fountain fox foyer fraction
    fracture fragile fragment fragrance frame framing frantic freedom freeing freely freeway
    freezing freight french frenzy frequency frequent fresh friction friday fridge fried
    friend fringe from front frosting frozen fruit frying gab gag gaining gains gala gallery
    gallon gambling game gaming gamma gap garage garbage garden garlic garment gas gathering
    gating gave gear geek gem gender generic generous genetics genre gentleman gently
    geography geometric geometry gesture getaway getting giant gift gigantic giveaway given
    giver giving glacier gladly glamorous glamour glance glare glaring glass glimpse glitch
    glitter glorious glory gloss glove glowing glucose glue gluten goal goes goggles going
    golf gone good goofy google gore gorgeous gossip gotten gown grab graceful gracious
    graded gradient grading gradually graduate graffiti grain grandma grandson granite
    granny grape graph grasp grass gratitude gravel graves gravity gravy gray grazing greedy
    green greeting grew grid grief grieving grill grip grit groom groove ground grouped
    growing grub grunt guidance guide guiding guise gulp guru gusto guts gutter guy habitat
    habitual hacked hacker hacking had half halves hamburger handbook handed handful handgun
    handheld handled handler handling handmade handset handshake happening happier happiest
    happily happiness happy harbor hardcore hardened hardly hardness hardship hardware
    hardwood harmful harmless harmony harness harsh harvest hash hassle haste hate hatred
    haunt haven hazard headache headed header heading headphone headset heap heat heavily
    hedge hefty helium helmet helper helpful helping helpless hence herald herbal herbs
    heritage herself hesitant hesitate hug hull human humble humid humility humming humorous
    hunger hungry hunter hunting hurdle hurricane hurried hurry hurt husband hut hybrid
    hydrated hydration hydrogen hyperlink hypocrisy ice icing icon icy ideally identical
    identify identity ideology ignition illusion image imaginary imaging imitation immature
    immersion imminent immortal immunity impaired impart impatient impending imperfect
    imperial implant implement implicit implode imply important importer impose imposing
    imprint imprison improper improve improving impulse ion ipad iphone iron irregular
    isolated isolation issue issuing item itinerary ivory jab jacket jackpot jam jasmine
    java jaws jazz jeep jelly jersey jet job jogging john joining jot joystick judge
    judicial judiciary juice juicy jump junction junior jury justice justify juvenile karma
    keep kept kettle kick kindly kindness kinetic king kissing kitchen kite kitten kitty
    knee kosher ladder ladies lake lance landed landfill landing landlord landmark landscape
    language lantern laptop large lash last latch late latitude latter launch laundry
    lavender lavish lazy lecturer left legacy legal legend leggings lemon lend length lens
    lent lesser letter lettuce level leverage liability liable liberty librarian library
    licking lid life lifting likely likeness likewise liking limb limit line lining linked
    lint lion lip liquid list litter little lived lively liver livestock living luckily
    lucrative lumber lunar lung lure luxurious luxury lying lyrics machine magazine magical
    magician magma magnesium magnetic magnitude majestic majority makeover maker making
    malformed malt mama manager managing mandate mandatory mango manifesto mankind manpower
    mantra manual many map marathon march margin marine marital maritime married marrow
    marry marvelous mascot masculine mashed masses massive matcher matching material
    maternal maternity math mating matrix matter maturity maximize maximum maybe mobile
    mobility modified modify modular module moisture mold molecular molecule mom monastery
    monday monetary mongoose monitor monopoly monstrous monthly monument mop morale morality
    morally mortality mosaic most motion motivate motive motor motto mountain mounted
    mounting mouse mouth movable move movie moving mower much mud mug multiple multiply
    multitude mundane municipal mural muscular museum mushroom music mustard muster mutable
    mutate mutation mute mutual muzzle myself myth nag nail name naming nanny narrow
    national native natural nature navigate navigator navy nearby nearest nearly neatly
    negate negative negligent negotiate neon nephew nerd nervous nest net neuron neutron
    next nickname nicotine niece nineteen ninja ninth nuclear nuclei nucleus number numeral
    numerator numeric numerous nursery nursing nurture nutrient nutshell nylon oak oasis oat
    obedience obedient object obliged obscure observer observing obsessed obsession
    obsessive obsolete obstacle obstruct obtain obvious occupancy occupy ocean oil okay old
    olive omega omission omit onboard ongoing onion online onset onto onward opacity open
    operate operating operation operative operator opponent oppose opposing opposite
    oppressed opt other ought ounce outage outbound outbreak outcome outdated outdoors outer
    outfit outgoing outing outlet outline outlook outrage outreach outright outsider
    outskirts outspoken outward outweigh oval oven overall overcome overdue overflow
    overhaul overhead overlap overlay overload overlook overnight overpower oversight
    oversized overthrow overtime overturn overview overwrite owl oxidation oxygen ozone
    paced padded padding paddle pagan pager paging palace palm panda pandemic pang panic
    panorama panoramic pantry pants paper parade paradox paragraph paralysis parameter
    paramount parasite parcel parchment pardon parish parking parole parsley parted
    partition partly partner party passage passenger passing passion passive passport pasta
    pastor pasture paternal path patience patient patio patriarch patriot patrol pavement
    paving payable paycheck payday payer paying payment payroll peculiar pediatric pedigree
    pellet penalty pencil pendant pending penny pension pep perceive percent perch perennial
    perfected perfectly perfume perish perm perpetual persuaded peso pesticide petite
    petition petroleum petty phantom phoenix phosphate photo phrase plank planner plant
    plasma plaster plastic plated platform platinum plausible playable playback player
    playful playing playlist playoff plaza pleading pledge plentiful plenty plethora plot
    plug plural plus plywood pod poem poet pointed pointer pointing pointless poison poker
    polar police policy polish politely polo polyester polygon polymer pond pony popcorn
    pope populace popular populate pork porous portable portal portfolio portion posing
    possible possibly postage postal posted poster posting posture pouch pound pouring
    powdered power praising prayer praying preacher preaching precinct precise precision
    predator predict prefix pregnancy pregnant premiere premises premium prenatal preorder
    prepaid preschool prescribe preseason preset president press presume pretty prevail
    prevalent prevent preview primal primarily primary primer princess prior prism prison
    pristine privacy prize proactive probable probably probation probe probing problem
    procedure process proclaim produce product professor profile profound prognosis program
    progress projector prolonged prominent promoter promotion promptly prone pronounce
    pronto proofs properly property proposal propose props protector proton prototype proud
    proved proven provided provider providing province proving provoke prowess proximity
    proxy prune pruning pry psychic public publisher pueblo pull pulmonary pulp pulse punch
    punk pupil puppet puppy purchase purely purge purity purple purposely purse pursuant
    pursuit pushing puzzle pyramid python quadrant quake qualified qualifier qualify quality
    quantum quarry quarterly quarters query quickly quiet quilt quit quotation quote race
    racing racism rack radar radial radiation radiator radio raft rage raging railing
    railroad railway rake rally ramp ranch random ranged ranger ranging ranked ranking rare
    rarity rash reach reaction reactive reactor reason reassure rebate rebel reboot rebound
    rebuild rebuilt recall recent recess recipient reckless reclaim recognize recoil
    reconcile record recount recovery recreate rectangle recycled recycling referee
    reference refill refined refinery refining reflected reflex reflux refrain refresh
    refund refusal refuse refusing regain regime region register registrar registry regress
    regular regulate regulator rehab reimburse rejoice related relation relative relax relay
    release reliable reliably reliance reliant relic relieve reload relocate reluctant rely
    remake remark remedy remember reminder remix remorse remote removable removal removed
    remover removing rename renderer rendering rendition renewable renewal renewed rental
    rented reopen reorder repaint repair repayment repeal repeated repent replace replay
    replica reply reporter repost reproduce reps reputable request require requisite resale
    research resemble resend resent reshape residence residency resident residual residue
    resigned resilient resistant resisting resize resolved resonate resort resource respect
    result resume resurrect retail retaining retention rethink retired retiring retract
    retreat retrieval retry return reunion reusable reuse revenge revenue revered reversal
    reverse reversing revert revise revision revisit revival revoke revolt revolving reward
    rewind rewrite rhyme ribbon rice riches richness ridden ride riding rigid rigor rinse
    riot ripping ripple rise rising risk rival roaming roast robe robin robotics robust
    rocker rocket rocking rocky rogue roman rope roster rotten roulette rounding roundup
    routine routing rover royal rubbed rubber rubbing rubble ruby rug ruined rule rumor
    rundown runner running runway rupture rural rush rust rut sabotage sacred sacrifice
    sadly sadness safari safeguard safely saga sage said saint sake salad salary saline
    salon salsa salt salute salvage salvation same sample sampling sanction sanctuary
    sandbox sandy sanitary sanitizer sank santa satin satisfied satisfy sauna savage saved
    savings scale scaling scam scandal scanner scanning scant scarce scarcity scared scarf
    scary scenic schedule schematic scheme scholar science scientist scoop scooter scope
    scored scorer scoring scouting scouts scrambled scrap scratch screen script scroll
    scrutiny sculpture secluded second secrecy sectional sector secular securely security
    sedan sediment segment seismic seldom selected selection selective selector self
    semantic semester seminar senate senator senior sensation sensitive september sequel
    sequence series sermon serotonin serpent serve service serving sesame sessions setback
    setting settle settling setup seventeen seventh seventy severity shack shaded shading
    shadow shady shaft shaking shaky shale shallow shame shampoo shape shaping share sharper
    sharply shed sheep sheet shelf shell shelter shield shifting shimmer shine shining shiny
    ship shirt shock shopper shopping shore shortage shortcut shorten shorter shorthand
    shortly shorts shout shove showcase showdown shower showing shown showroom shrimp shrine
    shrink shuffle shut shy sibling siding sift silent silica silicon silk silly silver
    similarly simple simplify simply sincere sincerity singer singing single singular
    sinister sip sister sitcom sitting situated situation sixteen sixth sizable size sizing
    skating skeletal skeleton skeptic sketch skies skiing skilled skillet skincare skinny
    skipping skirt skyline skype slab slain slam slang slate sled sleek sleep sleeve slept
    sliced slicing slick slider slideshow sliding slightly slip slit slogan sloppy slot slug
    small smashing smell smile smith smoked smoking smooth snack snap sneak sniff snippet
    snowy speak species specimen spectacle spectator spectrum speculate speech speed
    spelling spender spending spent sphere spherical spider spill spinach spinal spindle
    spinner spinning spiral spirited spirits spiritual splendid splice spoiled spoiler
    spoken spokesman sponge sponsor spoof spooky spoon sporting sports spotlight spotted
    spotting spouse spray spree spring sprint sprite sprung spur squad squash squeeze
    squeezing squid stability stabilize stable stack stadium staff stage staging stagnant
    stained staining stainless stamina stamp stand staple starch staring stark starring
    starter starting startling startup starving stash state static statistic statue stature
    status statute statutory stays steadfast steadily steam steep steering stellar stem
    stencil step stereo sterile sterling stew stick stiffness stimulate stimuli stimulus
    stir stitch stock stole stood stool stopped stopping stopwatch storage storm stout stove
    strained strangely stranger strategic strategy straw stray streak stream street strength
    stress stretch strict stride strike striking strive striving strongly struck structure
    struggle stubborn stuck student studied studio study stuffed stuffing stumble stumbling
    stump stunned stunning stunt sturdy styling stylist subdued subgroup subject sublime
    submarine subplot subscribe subsidy substance subsystem subtitle subtly subtotal
    subtract subtype suburb subway such suction sudden sudoku suffering suffice suffix sugar
    suggest suing suitable suitcase sulfate sulfur superhero superior supervise supper
    supplier supply support supremacy supreme surely surface surgery surgical surname
    surpass surplus surprise surreal surrender surrogate surround survey survival survive
    surviving survivor sushi suspect suspend suspense sustained swagger swapping swarm sway
    swear sweat sweep swell swept swiftly swimming swinger swinging swipe swirl switch sworn
    swung sympathy symptom syndrome synergy synopsis synthesis synthetic syrup tables tablet
    tackle tackling taco tactical tactics tactile tag take taking tall tank tapered tapping
    taps target task taste tasting tasty tattoo thank that thaw theater thee theft theme
    theology thermal these thesis thickness thigh thing think thinner thirsty thirteen
    thirty those thousand thread threaten thrift thrill thrive thriving throat throttle
    throwing thumb thus tidal tidy tiger tighten tightly tile till tilt timid timing tint
    tiny tipped tipping tissue trace tracing track traction tractor trade trading tradition
    traffic tragedy trailing train trance tranquil transfer transform translate transport
    transpose trapped trapping traps trash travel traverse tray treadmill treat tree
    trembling trench trend trial triangle tribunal tribute tricky tried trillion trilogy
    trimming trio tripod triumph trivial trolling trophy tropical trouble troubling trough
    trousers trout truck trump trustee trusting truth try tug tuition tumble turbine
    turbulent turf turkey turmoil turret turtle tutor tweak tweet twelve twentieth twenty
    twice twig twilight twins twisted twisting twitch twitter tying ultimate ultra umbrella
    unable unaware unbiased uncertain unchanged uncle uncommon uncover undead undefined
    undergo underline undermine undertake underwear underwent undone uneasy unequal
    unethical uneven unfair unfold unhappy unhealthy unheard unicorn unified uniformly unify
    uninstall uninsured union uniquely unit universal universe unknown unlawful unleash
    unless unlimited unloaded unlocked unlocking unlucky unmatched unnamed unnatural
    unnoticed unpack unpaid unpopular unread unreal unrelated unrest unsafe unseen unsigned
    unstable unsure until untouched untreated unused unusual unveiled unveiling unwanted
    unwilling unwind unzip upbeat upcoming update upfront upgrade upheld uphill uphold
    uplifting upon upper upright uprising upscale upside upstairs upstream uptake upward
    uranium urban urgency urgent urging usable usage used usher usual utility utilize utmost
    utter vacancy vacant vacation vaguely valid valley value vanilla vanish vanity variable
    varied variety various varying vascular vastly vegan velocity velvet vending vendor
    venture venue verbally verbose verdict verify verse version versus vertical very vessel
    vest veteran veto viability viable vibes vice vicinity victory video viewer viewing
    viewpoint vigorous village villain vintage violate violation violet violin viral virtual
    virus visa viscosity visible visibly vision visiting visitor vista vitality vitamins
    vocalist voice void volatile volley voltage volumes voter voting voucher vowed vowel
    voyage wager wages wagon wake waking walk walmart walnut wand wanted wanting washed
    washer washing wasting watch water waving wheat whenever whoever whole why widely widen
    widget widow width wife wifi wikipedia wildcard wildfire wildlife wildly willing wilt
    wind wing winner winnings winter wipe wired wireless wiring wisdom wise wish wizard wolf
    womb wool word work worried worry worsening worst wound woven wow wrath wrench wrist
    writing written wrongful wrongly wrought xbox yahoo yard yarn yeah yearly yeast yelling
    yen yesterday yield yoga yogurt yummy zap zen zero zombie zone zoning zoom
""".split())
